package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestListAndRemove: List gives each entry's run, configuration, size and
// last use, most recent first; Remove refuses an entry a writer holds.
func TestListAndRemove(t *testing.T) {
	run, root := testRun(t)
	a := openEntry(t, root, run, Options{})
	commitGen(t, a, 3, 2).Close()
	a.Close()
	b, _ := root.Open(run, []byte("mask=on"), Options{})
	defer b.Close()
	setUsed(t, root, a.Key(), time.Now().Add(-time.Hour))

	infos, err := root.List()
	if err != nil || len(infos) != 2 {
		t.Fatalf("%v %v", infos, err)
	}
	if infos[0].Key != b.Key() || infos[0].Err == nil || infos[1].Key != a.Key() {
		t.Fatalf("order or errors: %+v", infos)
	}
	got := infos[1]
	if got.RunPath != mustReal(t, run) || string(got.Config) != "config" || got.Generation != 1 || got.Size < 1000 {
		t.Errorf("%+v", got)
	}
	if err := root.Remove(b.Key()); !errors.Is(err, ErrInUse) {
		t.Errorf("remove of an entry in use: %v", err)
	}
	if err := root.Remove(a.Key()); err != nil {
		t.Fatal(err)
	}
	if err := root.Remove("../x"); err == nil {
		t.Error("removed a bad key")
	}
	if infos, _ := root.List(); len(infos) != 1 {
		t.Errorf("after remove: %+v", infos)
	}
	if names := dirNames(t, root.Path()); len(names) != 1 {
		t.Errorf("root holds %v", names)
	}
}

// TestTrim: entries used longest ago go first until the cache fits; the
// caller's own entry and one a live writer holds are kept.
func TestTrim(t *testing.T) {
	run, root := testRun(t)
	var keys []string
	var size int64
	for i, cfg := range []string{"a", "b", "c", "d"} {
		e, err := root.Open(run, []byte(cfg), Options{})
		if err != nil {
			t.Fatal(err)
		}
		commitGen(t, e, uint64(i+1), 1).Close()
		keys = append(keys, e.Key())
		if cfg == "b" {
			defer e.Close() // held: in use
		} else {
			e.Close()
		}
		setUsed(t, root, e.Key(), time.Now().Add(-time.Duration(10-i)*time.Minute))
	}
	infos, _ := root.List()
	for _, info := range infos {
		size += info.Size
	}
	// Oldest first: a (removed), b (in use, kept), c (removed); d is the
	// caller's own.
	removed, err := root.Trim(1, keys[3])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{keys[0], keys[2]}) {
		t.Errorf("removed %v, want %v", removed, []string{keys[0], keys[2]})
	}
	// A bound the cache fits removes nothing.
	if removed, _ := root.Trim(size, ""); len(removed) != 0 {
		t.Errorf("removed %v under the bound", removed)
	}
}

// TestTrimAtOpen: a writer's open with MaxBytes trims the others.
func TestTrimAtOpen(t *testing.T) {
	run, root := testRun(t)
	old := openEntry(t, root, run, Options{})
	commitGen(t, old, 1, 2).Close()
	old.Close()
	setUsed(t, root, old.Key(), time.Now().Add(-time.Hour))
	e, err := root.Open(run, []byte("other"), Options{MaxBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := os.Stat(old.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("old entry kept: %v", err)
	}
}

func TestDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cwd, _ := os.Getwd()
	cases := []struct {
		flag string
		env  map[string]string
		want string
	}{
		{"/flag", map[string]string{EnvDir: "/env"}, "/flag"},
		{"rel", nil, filepath.Join(cwd, "rel")},
		{"", map[string]string{EnvDir: "/env", "XDG_CACHE_HOME": "/xdg"}, "/env"},
		{"", map[string]string{"XDG_CACHE_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/runls"},
		{"", map[string]string{"XDG_CACHE_HOME": "relative", "HOME": "/home/u"}, "/home/u/.cache/runls"},
		{"", map[string]string{"HOME": "/home/u"}, "/home/u/.cache/runls"},
	}
	for _, c := range cases {
		if got, err := Dir(c.flag, env(c.env)); err != nil || got != c.want {
			t.Errorf("Dir(%q, %v) = %q, %v; want %q", c.flag, c.env, got, err, c.want)
		}
	}
	if r, err := Locate("/x", true, env(nil)); r != nil || err != nil {
		t.Errorf("--no-cache: %v %v", r, err)
	}
	tmp := filepath.Join(t.TempDir(), "a", "b")
	r, err := Locate(tmp, false, env(nil))
	if err != nil || r.Path() != tmp {
		t.Fatalf("%v %v", r, err)
	}
	if fi, err := os.Stat(tmp); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("root: %v %v", fi.Mode(), err)
	}
}

func setUsed(t *testing.T, root *Root, key string, when time.Time) {
	t.Helper()
	if err := os.Chtimes(filepath.Join(root.Path(), key, lockName), when, when); err != nil {
		t.Fatal(err)
	}
}
