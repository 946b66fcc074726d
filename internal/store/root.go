// This file holds the cache root: where it lives (flag, environment, the
// user's cache folder), its permissions, and how a run and configuration
// name their entry.

package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// DefaultMaxBytes is the spec's default --cache-max (§15).
const DefaultMaxBytes = 4 << 30

// EnvDir names the environment variable that sets the cache folder.
const EnvDir = "RUNLS_CACHE_DIR"

// Root is a cache folder holding one entry per run and configuration.
type Root struct {
	dir   string
	fixed []Item // modes tightened when the root was opened, told by the next Open's report
}

// Locate opens the cache root a command uses: nil (and no error) when
// caching is off (--no-cache); else the folder of Dir, created 0700.
func Locate(flagDir string, off bool, getenv func(string) string) (*Root, error) {
	if off {
		return nil, nil
	}
	dir, err := Dir(flagDir, getenv)
	if err != nil {
		return nil, err
	}
	return OpenRoot(dir)
}

// Dir is the cache folder: flagDir (--cache-dir) when given, else
// $RUNLS_CACHE_DIR, else $XDG_CACHE_HOME/runls (when absolute, as the XDG
// spec wants), else ~/.cache/runls. A relative flag or variable is taken
// from the current folder.
func Dir(flagDir string, getenv func(string) string) (string, error) {
	for _, d := range []string{flagDir, getenv(EnvDir)} {
		if d != "" {
			return filepath.Abs(d)
		}
	}
	if x := getenv("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "runls"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("store: no cache folder: %w (use --cache-dir or --no-cache)", err)
		}
		home = h
	}
	return filepath.Join(home, ".cache", "runls"), nil
}

// OpenRoot opens (creating) the cache folder dir. A folder another user
// owns is refused (ErrUnsafe): its entries could be anyone's bytes. A folder
// of ours open to others is tightened to 0700, and the next Open says so.
func OpenRoot(dir string) (*Root, error) {
	if err := lockSupported(); err != nil {
		return nil, err
	}
	r := &Root{dir: dir}
	item, err := ensureDir(dir, true)
	if err != nil {
		return nil, err
	}
	if item != nil {
		r.fixed = append(r.fixed, *item)
	}
	return r, nil
}

// Path is the root's folder.
func (r *Root) Path() string { return r.dir }

// Key is the name of the entry of a run folder (its real path) and a
// configuration: a hash, so that any path and any configuration bytes make
// a safe, fixed-length folder name. The manifest records both in full.
func Key(realRun string, config []byte) string {
	h := sha256.New()
	h.Write([]byte("runls cache entry\x00"))
	h.Write([]byte(realRun))
	h.Write([]byte{0})
	h.Write(config)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// RealPath is the run folder's absolute path with every link resolved: one
// run reached by two paths has one entry.
func RealPath(run string) (string, error) {
	abs, err := filepath.Abs(run)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

const (
	dirMode  os.FileMode = 0o700
	fileMode os.FileMode = 0o600
)

// ensureDir makes dir a folder of mode 0700 owned by this user: created if
// missing, tightened (and said) if open to others, refused if another user's
// or not a folder. follow says whether dir may be a link (the root, which a
// user may point elsewhere; never an entry).
func ensureDir(dir string, follow bool) (*Item, error) {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	fi, err := stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, dirMode); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		// MkdirAll's mode passes through the umask; say it exactly.
		if err := os.Chmod(dir, dirMode); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a folder", ErrUnsafe, dir)
	}
	if !ownedByMe(fi) {
		return nil, fmt.Errorf("%w: %s belongs to another user", ErrUnsafe, dir)
	}
	if perm := fi.Mode().Perm(); perm != dirMode {
		if err := os.Chmod(dir, dirMode); err != nil {
			return nil, fmt.Errorf("store: tighten %s: %w", dir, err)
		}
		return &Item{File: dir, Action: "tightened", Err: fmt.Errorf("mode %#o, now %#o", perm, dirMode)}, nil
	}
	return nil, nil
}
