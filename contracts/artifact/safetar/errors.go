package safetar

import (
	"errors"
	"fmt"
)

// The kinds of unsafe archive. Every error Unpack and Check return for an
// unsafe archive wraps one of these (test with errors.Is) inside an
// *EntryError naming the entry, or, for ErrArchiveTooLarge and
// ErrTooManyEntries, the entry that crossed the limit.
var (
	// ErrAbsolutePath: an entry or link target starts with "/" (or a
	// Windows drive or backslash).
	ErrAbsolutePath = errors.New("absolute path")
	// ErrPathTraversal: an entry name has a ".." element.
	ErrPathTraversal = errors.New("path traversal")
	// ErrLinkEscapes: a symbolic or hard link resolves outside the archive
	// root, or a hard link names no earlier regular file.
	ErrLinkEscapes = errors.New("link leaves the archive root")
	// ErrThroughLink: an entry would be written through a symbolic link.
	ErrThroughLink = errors.New("entry below a symbolic link")
	// ErrSpecialFile: a device, FIFO, or other entry that is neither a
	// regular file, a directory nor a link.
	ErrSpecialFile = errors.New("special file")
	// ErrInvalidName: an empty name, a NUL byte, or "." as a file.
	ErrInvalidName = errors.New("invalid entry name")
	// ErrDuplicate: two entries of the same name, one not a directory.
	ErrDuplicate = errors.New("duplicate entry")
	// ErrFileTooLarge: one file is larger than Limits.MaxFileSize.
	ErrFileTooLarge = errors.New("file too large")
	// ErrArchiveTooLarge: the files add up to more than Limits.MaxTotalSize.
	ErrArchiveTooLarge = errors.New("archive too large")
	// ErrTooManyEntries: more than Limits.MaxEntries entries.
	ErrTooManyEntries = errors.New("too many entries")
)

// EntryError is an unsafe entry: its name in the archive and the kind of
// problem (one of the Err values above), with details.
type EntryError struct {
	// Entry is the entry's name as stored in the archive.
	Entry string
	// Err is one of the Err values of this package.
	Err error
	// Detail says what exactly is wrong, e.g. the link target.
	Detail string
}

func (e *EntryError) Error() string {
	msg := fmt.Sprintf("unsafe archive: entry %q: %v", e.Entry, e.Err)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

func (e *EntryError) Unwrap() error { return e.Err }

func entryErr(name string, kind error, format string, args ...any) *EntryError {
	return &EntryError{Entry: name, Err: kind, Detail: fmt.Sprintf(format, args...)}
}
