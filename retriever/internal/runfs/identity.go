package runfs

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A file's identity and the racy-time rule (spec §7): the device and inode
// a file is known by, how a file planned to be read from where the last
// read stopped is checked once it is open, and whether an opened file is
// the one at its path in the run, reached through no link (§1).
//
// Timestamps are coarse (a clock tick, or a second on some file systems),
// so a file changed within RacyWindow of the time it was last read could
// have changed again without its time moving: such a file's content is
// checked on each update until its time is older than that, and a folder's
// listing is trusted the same way.

// RacyWindow is how recent a time must be to be distrusted.
const RacyWindow = 2 * time.Second

// Racy reports whether a file (or folder) of time mtime, looked at at time
// at, could have been written again within the same clock tick after that.
func Racy(mtime, at int64) bool { return mtime >= at-int64(RacyWindow) }

// RecheckResult is what a read planned from the commit position finds
// once the file is open.
type RecheckResult int

const (
	RecheckRead    RecheckResult = iota // the bytes after the commit position
	RecheckFresh                        // replaced, shrunk or rewritten: read whole
	RecheckNothing                      // nothing new: the content checked the same
)

// Known is what the last read knew of a file: its identity, its size and
// time, and where the read stopped.
type Known struct {
	Dev, Ino      uint64
	Size, ReadPos int64
	Mtime         int64
}

// Recheck decides, for a file planned to be read from its commit position
// and now open (info its stat), as the plan's second half: rewritten tells
// whether its head or the bytes before the read position changed (the
// update compares the bytes, `runls cache list` their fingerprints).
func Recheck(old Known, info fs.FileInfo, rewritten func() bool) RecheckResult {
	size := info.Size()
	dev, ino := FileID(info)
	switch {
	case dev != old.Dev || ino != old.Ino || size < old.ReadPos || rewritten():
		return RecheckFresh
	case size == old.ReadPos && size == old.Size && info.ModTime().UnixNano() == old.Mtime:
		return RecheckNothing
	}
	return RecheckRead
}

// AtPath reports whether an opened regular file is the file at its path
// rel in the run at root (fsys), reached through no link: os.Root follows
// links that stay inside the run, in any element of a path, so a file or
// folder replaced by a link after it was listed would open the link's
// target (spec §1: links are never followed). The kernel tells the opened
// file's path: another path in the run means a link was followed. A path
// elsewhere (the run folder moved, or no /proc) says nothing of links: then
// the file must be the one listed at the path, or the one the path names
// now.
func AtPath(root string, fsys *os.Root, f FileReader, rel string, listed Stat, opened fs.FileInfo) bool {
	if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err == nil {
		if p == Abs(root, rel) {
			return true
		}
		if strings.HasPrefix(p, root+string(filepath.Separator)) {
			return false
		}
	}
	dev, ino := FileID(opened)
	if listed.Dev == dev && listed.Ino == ino {
		return true
	}
	now, err := fsys.Lstat(rel)
	if err != nil || !now.Mode().IsRegular() {
		return false
	}
	ndev, nino := FileID(now)
	return ndev == dev && nino == ino
}

// Abs is the absolute path of rel (a slash path relative to the run folder
// root; "." is the run folder).
func Abs(root, rel string) string {
	if rel == "." {
		return root
	}
	return root + string(os.PathSeparator) + filepath.FromSlash(rel)
}

// FileReader is a file opened to be read by an update: an *os.File, or on
// Linux a bare descriptor opened in a folder (see OpenNoFollow), which costs
// neither a poller registration nor a finalizer.
type FileReader interface {
	io.ReaderAt
	Stat() (fs.FileInfo, error)
	Fd() uintptr
	Close() error
}

// OpenFile opens a file listed as regular for reading without blocking: a
// FIFO put at its path since it was listed would block a plain open until a
// writer came. Opened so, a FIFO or device opens at once, and the caller's
// check of its type or identity leaves it out; O_NOCTTY keeps a terminal from
// becoming the process's.
func OpenFile(r *os.Root, rel string) (*os.File, error) {
	return r.OpenFile(rel, openFlags, 0)
}

// openFlags are OpenFile's (and the read-back handles', openReadBack).
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
