package persist

import (
	"reflect"
	"testing"

	"runls/retriever/internal/records"
)

// TestNoteTable: a note's counts and table state are refused by noteTable
// exactly when the table records.Cut makes of them is refused or not
// Empty (what the restore made and checked of every note before), for
// none set and for each field of both set alone, nested ones too.
func TestNoteTable(t *testing.T) {
	one := records.Columns{
		Line: []uint32{0}, Sec: []uint32{0}, Ms: []uint16{0}, Conv: []uint32{0}, Meta: []uint8{0},
		Over: make([]records.TimeOver, 1), Spans: make([]records.Span, 1), Runs: make([]records.Run, 1), Descents: []uint32{0},
	}
	check := func(what string, n records.Counts, s records.Saved) {
		t.Helper()
		var tab records.Table
		cut := one.CutUnchecked(&tab, &records.Counts{}, n, s)
		want := cut != nil || !tab.Empty()
		if got := noteTable(n, s) != nil; got != want {
			t.Errorf("%s: noteTable refuses %v, Cut and Empty %v (%v)", what, got, want, cut)
		}
	}
	check("nothing", records.Counts{}, records.Saved{})
	fields := 0
	var setEach func(v reflect.Value, name string, done func(string))
	setEach = func(v reflect.Value, name string, done func(string)) {
		for i := range v.NumField() {
			f, fname := v.Field(i), name+"."+v.Type().Field(i).Name
			switch f.Kind() {
			case reflect.Struct:
				setEach(f, fname, done)
				continue
			case reflect.Bool:
				f.SetBool(true)
			case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				f.SetUint(1)
			case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				f.SetInt(1)
			default:
				t.Fatalf("%s: a field of kind %v", fname, f.Kind())
			}
			done(fname)
			f.SetZero()
			fields++
		}
	}
	var n records.Counts
	var s records.Saved
	setEach(reflect.ValueOf(&n).Elem(), "Counts", func(name string) { check(name, n, records.Saved{}) })
	setEach(reflect.ValueOf(&s).Elem(), "Saved", func(name string) { check(name, records.Counts{}, s) })
	if fields < 20 {
		t.Errorf("%d fields set", fields)
	}
}
