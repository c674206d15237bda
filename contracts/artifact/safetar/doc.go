// Package safetar unpacks gzip-compressed tar archives (Helm chart
// archives, the layers of a catalog artifact) that came from someone else,
// without letting them write outside the target directory or exhaust the
// disk.
//
// The rules, each reported as an *EntryError wrapping one of this package's
// Err values:
//   - names are relative, use '/', have no ".." element, no NUL and no
//     backslash (ErrAbsolutePath, ErrPathTraversal, ErrInvalidName);
//   - only regular files, directories, symbolic links and hard links;
//     devices, FIFOs and the like are ErrSpecialFile;
//   - a symbolic link's target, resolved through every other link of the
//     archive as the kernel would, stays inside the root; a hard link names
//     an earlier regular file of the archive (ErrLinkEscapes); no entry is
//     written through a link (ErrThroughLink);
//   - a name appears once, except directories (ErrDuplicate);
//   - at most Limits.MaxEntries entries, Limits.MaxFileSize bytes per file
//     and Limits.MaxTotalSize bytes in all (uncompressed).
//
// All writes go through an os.Root, and links are created only after every
// entry has been checked, so even a rule this package missed could not
// make it write outside the directory. The rules are part of the artifact
// format: contracts/artifact/README.md, "Unpacking".
package safetar
