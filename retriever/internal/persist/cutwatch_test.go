package persist

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"runls/internal/store"
)

// A watched blob file cut is seen by the next check, whatever came before
// it: nothing, a clean check, a change that cut nothing (an append); before
// the guard watches (its first checks stat), from the check that starts the
// watch, and for a file mapped after it started. Where inotify is (Linux), a
// check with nothing changed once the guard watches stats no file, and the
// guard falls back to stat every time when it cannot watch; each way finds
// the cut.
func TestGuardSeesACutAtTheNextCheck(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		for _, warm := range []int{0, watchAfterChecks - 2, watchAfterChecks - 1, watchAfterChecks} {
			for _, before := range []string{"nothing", "a clean check", "an append"} {
				guardCutCase(t, fallback, warm, before)
			}
		}
	}
}

// guardCutCase is one case of TestGuardSeesACutAtTheNextCheck: warm checks
// made before the case's first one, then a file mapped late, then before.
func guardCutCase(t *testing.T, fallback bool, warm int, before string) {
	dir := t.TempDir()
	var g mappingGuard
	defer g.close()
	if fallback {
		g.changes.refuse()
	}
	watch := func(n string) {
		must(t, os.WriteFile(filepath.Join(dir, n), make([]byte, 8192), 0o644))
		g.mu.Lock()
		ok := g.watchFile(filepath.Join(dir, n))
		g.mu.Unlock()
		if !ok {
			t.Fatalf("%s not watched", n)
		}
	}
	for _, n := range []string{"a.blob", "b.blob", "c.blob"} {
		watch(n)
	}
	for range warm {
		if err := g.check(); err != nil {
			t.Fatalf("fallback %v: nothing cut: %v", fallback, err)
		}
	}
	watch("late.blob")
	if err := g.check(); err != nil {
		t.Fatalf("fallback %v: nothing cut: %v", fallback, err)
	}
	if runtime.GOOS == "linux" && !fallback && warm+1 >= watchAfterChecks {
		g.mu.Lock()
		changed := g.changes.changed()
		g.mu.Unlock()
		if changed {
			t.Errorf("nothing changed since the last check, yet the watch says a file may have: every request stats every file")
		}
	}
	switch before {
	case "a clean check":
		if err := g.check(); err != nil {
			t.Fatal(err)
		}
	case "an append":
		f, err := os.OpenFile(filepath.Join(dir, "a.blob"), os.O_APPEND|os.O_WRONLY, 0)
		must(t, err)
		_, err = f.Write([]byte("more"))
		must(t, err)
		must(t, f.Close())
		if err := g.check(); err != nil {
			t.Fatalf("an append is no cut: %v", err)
		}
	}
	for _, cut := range []string{"a.blob", "c.blob", "late.blob"} {
		must(t, os.Truncate(filepath.Join(dir, cut), 100))
		err := g.check()
		if !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("fallback %v, %d checks first, after %s: a cut of %s not seen by the next check: %v", fallback, warm, before, cut, err)
		}
		if err := g.check(); err != nil {
			t.Errorf("the cut said twice: %v", err)
		}
		g.cut = false // the guard says a cut once; look for the next
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
