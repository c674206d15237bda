package safetar

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// Limits bound what an archive may hold. A zero or negative field takes
// its default from DefaultLimits.
type Limits struct {
	// MaxEntries is the most entries (files, directories, links) allowed.
	MaxEntries int
	// MaxFileSize is the largest uncompressed file allowed, in bytes.
	MaxFileSize int64
	// MaxTotalSize is the most uncompressed bytes of all files together.
	MaxTotalSize int64
}

// DefaultLimits are Helm's own limits for chart archives
// (helm.sh/helm/v3/pkg/chart/loader: MaxDecompressedFileSize 5 MiB,
// MaxDecompressedChartSize 100 MiB), so whatever Helm would load unpacks
// here, and 10,000 entries (a chart with its library charts has a few
// hundred).
func DefaultLimits() Limits {
	return Limits{MaxEntries: 10_000, MaxFileSize: 5 << 20, MaxTotalSize: 100 << 20}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = d.MaxFileSize
	}
	if l.MaxTotalSize <= 0 {
		l.MaxTotalSize = d.MaxTotalSize
	}
	return l
}

// Unpack extracts the gzip-compressed tar archive read from r into dir,
// which must exist and be empty. Files get mode 0644 (0755 when any
// execute bit is set), directories 0755; owners, times and special bits
// are not restored. It returns an *EntryError for an unsafe archive and
// other errors for an unreadable one or a failed write. On error dir holds
// a partial tree: unpack into a fresh directory and remove it on error.
func Unpack(r io.Reader, dir string, limits Limits) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("unpack into %s: %w", dir, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("unpack into %s: the directory is not empty: unpack into a fresh directory", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("unpack into %s: %w", dir, err)
	}
	defer root.Close()
	return newScanner(root, limits).run(r)
}

// Check reads the whole archive from r and applies every rule of Unpack
// without writing anything.
func Check(r io.Reader, limits Limits) error {
	return newScanner(nil, limits).run(r)
}

type kind int

const (
	kindDir kind = iota + 1
	kindFile
	kindSymlink
	kindHardlink
)

type link struct {
	name, target string
	kind         kind
}

// scanner checks (and, with a root, writes) one archive.
type scanner struct {
	root   *os.Root // nil: check only
	limits Limits
	kinds  map[string]kind   // clean name → kind, directories implied by paths included
	links  []link            // in archive order
	syms   map[string]string // symlink name → target
	count  int
	total  int64
}

func newScanner(root *os.Root, limits Limits) *scanner {
	return &scanner{root: root, limits: limits.withDefaults(), kinds: map[string]kind{}, syms: map[string]string{}}
}

func (s *scanner) run(r io.Reader) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("not a gzip-compressed tar archive: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read archive: %w", err)
		}
		if hd.Typeflag == tar.TypeXGlobalHeader {
			continue // PAX defaults for later entries, no file
		}
		s.count++
		if s.count > s.limits.MaxEntries {
			return entryErr(hd.Name, ErrTooManyEntries, "more than %d entries", s.limits.MaxEntries)
		}
		if err := s.entry(hd, tr); err != nil {
			return err
		}
	}
	// Reading to the end of the gzip stream checks its CRC; a chart archive
	// ends with at most a few blocks of tar padding.
	if n, err := io.Copy(io.Discard, io.LimitReader(zr, 1<<20)); err != nil {
		return fmt.Errorf("read archive: %w", err)
	} else if n == 1<<20 {
		return fmt.Errorf("read archive: more than 1 MiB of data after the end of the tar archive")
	}
	return s.finishLinks()
}

func (s *scanner) entry(hd *tar.Header, tr *tar.Reader) error {
	name, err := cleanName(hd.Name)
	if err != nil {
		return err
	}
	if name == "." {
		if hd.Typeflag == tar.TypeDir {
			return nil // the root itself
		}
		return entryErr(hd.Name, ErrInvalidName, "only a directory can be the archive root")
	}
	switch hd.Typeflag {
	case tar.TypeDir:
		if err := s.claim(hd.Name, name, kindDir); err != nil {
			return err
		}
		if s.root != nil {
			return s.root.MkdirAll(name, 0o755)
		}
		return nil
	case tar.TypeReg, '\x00': // '\x00' is the pre-POSIX regular file
		return s.file(hd, name, tr)
	case tar.TypeSymlink:
		if err := checkLinkTarget(hd.Name, hd.Linkname); err != nil {
			return err
		}
		if err := s.claim(hd.Name, name, kindSymlink); err != nil {
			return err
		}
		s.syms[name] = hd.Linkname
		s.links = append(s.links, link{name: name, target: hd.Linkname, kind: kindSymlink})
		return nil
	case tar.TypeLink:
		target, err := cleanName(hd.Linkname)
		if err != nil || s.kinds[target] != kindFile {
			return entryErr(hd.Name, ErrLinkEscapes, "hard link to %q, which is not an earlier regular file of the archive", hd.Linkname)
		}
		if err := s.claim(hd.Name, name, kindHardlink); err != nil {
			return err
		}
		s.links = append(s.links, link{name: name, target: target, kind: kindHardlink})
		return nil
	default:
		return entryErr(hd.Name, ErrSpecialFile, "type %q (%s); only regular files, directories and links are allowed", hd.Typeflag, typeName(hd.Typeflag))
	}
}

func (s *scanner) file(hd *tar.Header, name string, tr *tar.Reader) error {
	if hd.Size > s.limits.MaxFileSize {
		return entryErr(hd.Name, ErrFileTooLarge, "%d bytes, the limit is %d", hd.Size, s.limits.MaxFileSize)
	}
	if s.total+hd.Size > s.limits.MaxTotalSize {
		return entryErr(hd.Name, ErrArchiveTooLarge, "files add up to more than %d bytes", s.limits.MaxTotalSize)
	}
	s.total += hd.Size
	if err := s.claim(hd.Name, name, kindFile); err != nil {
		return err
	}
	if s.root == nil {
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return fmt.Errorf("read archive entry %q: %w", hd.Name, err)
		}
		return nil
	}
	if dir := path.Dir(name); dir != "." {
		if err := s.root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	mode := os.FileMode(0o644)
	if hd.Mode&0o111 != 0 {
		mode = 0o755
	}
	f, err := s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	// The tar reader yields exactly hd.Size bytes, already checked above.
	_, err = io.Copy(f, tr)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// claim records name as k, rejecting a name seen before (unless both are
// directories) and a name below a file or link.
func (s *scanner) claim(raw, name string, k kind) error {
	parts := strings.Split(name, "/")
	for i := 1; i < len(parts); i++ {
		parent := strings.Join(parts[:i], "/")
		switch s.kinds[parent] {
		case kindSymlink:
			return entryErr(raw, ErrThroughLink, "%q is a symbolic link", parent)
		case kindFile, kindHardlink:
			return entryErr(raw, ErrDuplicate, "%q is a file, not a directory", parent)
		case 0:
			s.kinds[parent] = kindDir
		}
	}
	if prev, ok := s.kinds[name]; ok {
		if prev == kindDir && k == kindDir {
			return nil
		}
		if prev == kindDir {
			return entryErr(raw, ErrDuplicate, "%q is already a directory of the archive", name)
		}
		return entryErr(raw, ErrDuplicate, "%q appears more than once", name)
	}
	s.kinds[name] = k
	return nil
}

// finishLinks checks every symbolic link against the complete tree, then
// creates the links. Links come last so that no file is written through
// one, whatever the order of the archive.
func (s *scanner) finishLinks() error {
	for _, l := range s.links {
		if l.kind != kindSymlink {
			continue
		}
		hops := 0
		if _, inside := s.resolve(parentParts(l.name), l.target, &hops); !inside {
			return entryErr(l.name, ErrLinkEscapes, "symbolic link to %q resolves outside the archive root", l.target)
		}
	}
	if s.root == nil {
		return nil
	}
	for _, l := range s.links {
		if dir := path.Dir(l.name); dir != "." {
			if err := s.root.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		var err error
		if l.kind == kindSymlink {
			err = s.root.Symlink(l.target, l.name)
		} else {
			err = s.root.Link(l.target, l.name)
		}
		if err != nil {
			return fmt.Errorf("create link %s: %w", l.name, err)
		}
	}
	return nil
}

// maxHops is the most symbolic links followed in one resolution, as
// Linux's MAXSYMLINKS (40).
const maxHops = 40

// resolve follows target from the directory dir (path elements below the
// root) through every symbolic link of the archive on its way, as the
// kernel would, and returns where it lands; false when it leaves the root
// or follows more than maxHops links.
func (s *scanner) resolve(dir []string, target string, hops *int) ([]string, bool) {
	if strings.HasPrefix(target, "/") {
		return nil, false
	}
	stack := append([]string(nil), dir...)
	for _, elem := range strings.Split(target, "/") {
		switch elem {
		case "", ".":
			continue
		case "..":
			if len(stack) == 0 {
				return nil, false
			}
			stack = stack[:len(stack)-1]
			continue
		}
		stack = append(stack, elem)
		next, isLink := s.syms[strings.Join(stack, "/")]
		if !isLink {
			continue
		}
		if *hops++; *hops > maxHops {
			return nil, false
		}
		resolved, ok := s.resolve(stack[:len(stack)-1], next, hops)
		if !ok {
			return nil, false
		}
		stack = resolved
	}
	return stack, true
}

func parentParts(name string) []string {
	dir := path.Dir(name)
	if dir == "." {
		return nil
	}
	return strings.Split(dir, "/")
}

// cleanName returns the clean form of an entry name, or an *EntryError.
func cleanName(raw string) (string, error) {
	switch {
	case raw == "" || strings.ContainsRune(raw, 0):
		return "", entryErr(raw, ErrInvalidName, "empty or with a NUL byte")
	case strings.ContainsRune(raw, '\\'):
		return "", entryErr(raw, ErrInvalidName, "contains a backslash; archive names use '/'")
	case isAbs(raw):
		return "", entryErr(raw, ErrAbsolutePath, "names must be relative to the archive root")
	}
	for _, elem := range strings.Split(raw, "/") {
		if elem == ".." {
			return "", entryErr(raw, ErrPathTraversal, `".." elements are not allowed`)
		}
	}
	return path.Clean(raw), nil
}

func checkLinkTarget(raw, target string) error {
	switch {
	case target == "" || strings.ContainsRune(target, 0):
		return entryErr(raw, ErrInvalidName, "symbolic link with an empty target or a NUL byte")
	case strings.ContainsRune(target, '\\') || isAbs(target):
		return entryErr(raw, ErrLinkEscapes, "symbolic link to the absolute path %q", target)
	}
	return nil
}

// isAbs reports a Unix absolute path or a Windows drive path ("C:...").
func isAbs(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	return len(p) >= 2 && p[1] == ':' && (p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z')
}

func typeName(t byte) string {
	switch t {
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "FIFO"
	case tar.TypeCont:
		return "contiguous file"
	case tar.TypeGNUSparse:
		return "GNU sparse file"
	default:
		return "unsupported type"
	}
}
