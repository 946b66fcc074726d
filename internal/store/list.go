// This file holds what `runls cache list` and `runls cache clear` need and
// the --cache-max bound: the root's entries with their size and last use,
// removing one (never while a live writer holds it), and dropping the
// entries used longest ago.

package store

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ErrInUse: an entry a live process writes is not removed.
var ErrInUse = errors.New("store: entry in use by a running runls")

// EntryInfo describes one entry of the root.
type EntryInfo struct {
	Key      string
	Size     int64     // bytes of its files
	LastUsed time.Time // the last open or commit
	// From the manifest, when it reads (else Err says why):
	RunPath    string
	Config     []byte
	Generation uint64
	Caller     []byte // the caller's section (the retriever's file table)
	Err        error
}

// List gives the root's entries, used most recently first. A manifest that
// does not read is no error of List's: its EntryInfo.Err says why.
func (r *Root) List() ([]EntryInfo, error) {
	infos, err := r.entries()
	if err != nil {
		return nil, err
	}
	for i := range infos {
		info := &infos[i]
		data, err := os.ReadFile(filepath.Join(r.dir, info.Key, manifestName))
		if err != nil {
			info.Err = err
			continue
		}
		m, err := decodeManifest(data, false) // data is this entry's alone
		if err != nil {
			info.Err = err
			continue
		}
		info.RunPath, info.Config, info.Generation, info.Caller = m.RunPath, m.Config, m.Generation, m.Caller
	}
	return infos, nil
}

// Remove removes the entry key, taking its writer's lock first so that a
// running writer's entry is refused (ErrInUse). The folder is renamed out of
// the way before it is emptied, so a process opening the entry meanwhile
// makes a new one rather than writing into one being removed; readers keep
// what they mapped.
func (r *Root) Remove(key string) error {
	if !validKey(key) {
		return fmt.Errorf("store: no entry %q", key)
	}
	dir := filepath.Join(r.dir, key)
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// An entry without a lock file was never opened by a writer.
	case err != nil:
		return fmt.Errorf("store: %w", err)
	default:
		defer lock.Close()
		ok, err := tryLock(lock)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %s", ErrInUse, key)
		}
	}
	trash := filepath.Join(r.dir, trashPrefix+strings.TrimPrefix(newBlobName(), blobPrefix))
	if err := os.Rename(dir, trash); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// Trim removes entries, used longest ago first, until the root holds at
// most max bytes; keep (this process's entry) and entries in use are never
// removed, so the root may stay over max. It gives the keys removed.
func (r *Root) Trim(max int64, keep string) ([]string, error) {
	infos, err := r.entries()
	if err != nil {
		return nil, err
	}
	var total int64
	for _, info := range infos {
		total += info.Size
	}
	var removed []string
	for i := len(infos) - 1; i >= 0 && total > max; i-- {
		info := infos[i]
		if info.Key == keep {
			continue
		}
		if err := r.Remove(info.Key); err != nil {
			continue
		}
		total -= info.Size
		removed = append(removed, info.Key)
	}
	return removed, nil
}

// trashPrefix names a folder being removed; one left by a crash goes at the
// next listing.
const trashPrefix = ".trash-"

// entries lists the root's entry folders with sizes and last use, most
// recent first; leftovers of interrupted removals are removed.
func (r *Root) entries() ([]EntryInfo, error) {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var infos []EntryInfo
	for _, d := range ents {
		name := d.Name()
		if strings.HasPrefix(name, trashPrefix) {
			os.RemoveAll(filepath.Join(r.dir, name))
			continue
		}
		if !d.IsDir() || !validKey(name) {
			continue
		}
		info := EntryInfo{Key: name}
		dir := filepath.Join(r.dir, name)
		files, err := os.ReadDir(dir)
		if err != nil {
			continue // removed meanwhile
		}
		for _, f := range files {
			if fi, err := f.Info(); err == nil && fi.Mode().IsRegular() {
				info.Size += fi.Size()
			}
		}
		if fi, err := os.Stat(filepath.Join(dir, lockName)); err == nil {
			info.LastUsed = fi.ModTime()
		} else if fi, err := d.Info(); err == nil {
			info.LastUsed = fi.ModTime()
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b EntryInfo) int {
		return cmp.Or(b.LastUsed.Compare(a.LastUsed), cmp.Compare(a.Key, b.Key))
	})
	return infos, nil
}

// validKey reports whether name is of Key's shape.
func validKey(name string) bool {
	if len(name) != 32 {
		return false
	}
	for _, c := range []byte(name) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
