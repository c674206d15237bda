package helm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"cozystack.io/tools/internal/boundary/edge"
)

// Symbolic links are followed as Helm's loader follows them (sympath.Walk in
// helm.sh/helm/v3: a link to a directory is walked as a directory, a link to
// a file read as the file), with three differences that keep the scan
// bounded and honest, each reported as a chart-symlink finding on the link:
//
//   - a dangling link, or a chain of links that never ends, is a finding
//     (Helm fails to load the chart);
//   - a link to a directory that holds the link (a loop) is a finding, not
//     walked (Helm would recurse until the path is too long);
//   - a link whose target leaves the scanned tree is a finding, not
//     followed: what lies there belongs to no module of the tree. Only a
//     link the scan would read counts: to a directory (it could hold
//     charts), or to a file of a chart the scan reads (a template, a CRD).
//
// Each link is reported once, at the path where it lies once its parent
// directories are resolved, however many links lead to it. A link inside a
// chart to a file or directory of another module (not a subchart: those are
// dependencies) is followed and is itself a chart-dependency edge: Helm loads
// that module's file as the chart's own.

// step is one directory of a walk: its real absolute path, and the link the
// walk crossed to enter it, if any.
type step struct {
	real string
	link *crossing
}

// crossing is a symbolic link the walk followed.
type crossing struct {
	logical string // slash path relative to the root, as the walk reached it
	at      string // slash path relative to the root where the link lies, its parents resolved
	text    string // what the link says (os.Readlink)
	real    string // slash path relative to the root of the target
}

// follow resolves the link abs (a real directory, the last of stack, the
// real directories of the walk so far, joined with the link's name) and returns its real
// absolute target and whether that is a directory. ok is false when the
// link is not followed; it was then reported, except a link leaving the
// tree that relevant (given whether the target is a directory) says the
// scan would not have read anyway.
func (s *scanner) follow(abs string, stack []step, relevant func(isDir bool) bool) (target string, dir, ok bool) {
	parent := stack[len(stack)-1].real
	at, text := s.realRel(abs), readlink(abs)
	real, err := filepath.EvalSymlinks(abs)
	var st fs.FileInfo
	if err == nil {
		st, err = os.Stat(real)
	}
	if err != nil {
		_, statErr := os.Stat(abs)
		switch {
		case errors.Is(statErr, fs.ErrNotExist):
			s.linkFinding(at, text, fmt.Sprintf("dangling: it links to %q, which does not exist", text))
		case errors.Is(statErr, syscall.ELOOP):
			s.linkFinding(at, text, fmt.Sprintf("loops: %q starts a chain of links that never ends", text))
		default:
			s.linkFinding(at, text, fmt.Sprintf("cannot be resolved: it links to %q: %v", text, err))
		}
		return "", false, false
	}
	if !inside(s.realRoot, real) {
		if relevant(st.IsDir()) {
			s.linkFinding(at, text, fmt.Sprintf("leaves the scanned tree: it links to %q, whose content belongs to no module of the tree and is not scanned", text))
		}
		return "", false, false
	}
	if st.IsDir() {
		loops := inside(real, parent) // an ancestor of the link
		for _, d := range stack {
			loops = loops || d.real == real // a directory the walk came through
		}
		if loops {
			s.linkFinding(at, text, fmt.Sprintf("loops: it links to %q, a directory that holds the link, so following it would never end", text))
			return "", false, false
		}
	}
	return real, st.IsDir(), true
}

// linkFinding records a chart-symlink finding at the link's resolved
// location (at), once.
func (s *scanner) linkFinding(at, text, reason string) {
	if s.links[at] {
		return
	}
	s.links[at] = true
	s.edges = append(s.edges, edge.Edge{Rule: edge.ChartSymlink, From: s.cfg.ModuleOf(at), File: at, Target: text, Reason: reason})
}

// realRel returns the slash path of a real absolute path relative to the
// real root ("" for the root itself).
func (s *scanner) realRel(real string) string {
	rel, err := filepath.Rel(s.realRoot, real)
	if err != nil || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

// inside reports whether p is root or below it; both absolute and clean.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// walkTree visits the directory at logical slash path rel (real absolute
// path stack's last), calls visit for it, then walks its subdirectories and
// the links to directories in it, skipping what the configuration
// excludes.
func (s *scanner) walkTree(rel string, stack []step, visit func(rel string, stack []step) error) error {
	if err := visit(rel, stack); err != nil {
		return err
	}
	dir := stack[len(stack)-1].real
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		childRel := join(rel, e.Name())
		if s.cfg.Excluded(childRel) {
			continue
		}
		abs := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			if err := s.walkTree(childRel, append(stack[:len(stack):len(stack)], step{real: abs}), visit); err != nil {
				return err
			}
		case e.Type()&fs.ModeSymlink != 0:
			target, isDir, ok := s.follow(abs, stack, func(isDir bool) bool { return isDir })
			if !ok || !isDir {
				continue
			}
			link := &crossing{logical: childRel, at: s.realRel(abs), text: readlink(abs), real: s.realRel(target)}
			if err := s.walkTree(childRel, append(stack[:len(stack):len(stack)], step{real: target, link: link}), visit); err != nil {
				return err
			}
		}
	}
	return nil
}

func readlink(p string) string {
	text, _ := os.Readlink(p)
	return text
}

// readFiles returns the files of a chart directory the scan needs (see
// wantedFile; directories holding a Chart.yaml are charts of their own),
// following links as the walk does, keyed by their slash path
// inside the chart, and the links it followed into another module than the
// chart's. stack ends with the chart's own directory.
func (s *scanner) readFiles(stack []step) (map[string][]byte, []crossing, error) {
	files := map[string][]byte{}
	module := s.cfg.ModuleOf(s.realRel(stack[len(stack)-1].real))
	var foreign []crossing
	var read func(inner string, stack []step) error
	read = func(inner string, stack []step) error {
		dir := stack[len(stack)-1].real
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := join(inner, e.Name())
			abs := filepath.Join(dir, e.Name())
			isDir, real := e.IsDir(), abs
			if e.Type()&fs.ModeSymlink != 0 {
				if !wantedFile(name, true) && !wantedFile(name, false) {
					continue
				}
				target, targetDir, ok := s.follow(abs, stack, func(isDir bool) bool { return wantedFile(name, isDir) })
				if !ok {
					continue
				}
				isDir, real = targetDir, target
				if wantedFile(name, isDir) && s.cfg.ModuleOf(s.realRel(real)) != module {
					foreign = append(foreign, crossing{logical: name, at: s.realRel(abs), text: readlink(abs), real: s.realRel(real)})
				}
			}
			if !wantedFile(name, isDir) {
				continue
			}
			if isDir {
				if _, err := os.Stat(filepath.Join(real, "Chart.yaml")); err == nil {
					continue // a chart of its own, which the walk finds
				}
				if err := read(name, append(stack[:len(stack):len(stack)], step{real: real})); err != nil {
					return err
				}
				continue
			}
			data, err := os.ReadFile(real)
			if err != nil {
				return err
			}
			files[name] = data
		}
		return nil
	}
	err := read("", stack)
	return files, foreign, err
}
