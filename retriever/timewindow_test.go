package retriever

import (
	"errors"
	"slices"
	"testing"
)

// A run whose records span three seconds, with milliseconds, a line before
// the first record, a history file and a plain note.
var windowRun = map[string]string{
	"episode-1/alice/alice.log": "" +
		"2026-10-21 18:00:04.900 INFO  [s] [c1] alice zebra four\n" +
		"2026-10-21 18:00:05 INFO  [s] [c1] alice zebra five\n" +
		"2026-10-21 18:00:05,300 ERROR [s] [c1] alice zebra five300\n" +
		"zebra continuation of five300\n" +
		"2026-10-21 18:00:06 INFO  [s] [c1] alice zebra six\n",
	"episode-2/bob/bob.history": "opening zebra before first\n" +
		"2026-10-21 18:00:05 [s] [c1] bob zebra history five\n",
	"episode-1/alice/notes.txt": "zebra note without a time\n",
}

func TestSearchTimeWindow(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, windowRun)})
	tests := []struct {
		name     string
		from, to string
		want     []string
	}{
		{"no bounds: every piece", "", "", []string{"opening zebra before first", "alice zebra four", "alice zebra five", "alice zebra five300",
			"zebra continuation of five300", "alice zebra six", "bob zebra history five", "zebra note without a time"}},
		{"to the second: 05,300 is within to 05", "", "2026-10-21 18:00:05",
			[]string{"alice zebra four", "alice zebra five", "alice zebra five300", "zebra continuation of five300", "bob zebra history five"}},
		{"from is inclusive, milliseconds after it count", "2026-10-21 18:00:05", "",
			[]string{"alice zebra five", "alice zebra five300", "zebra continuation of five300", "alice zebra six", "bob zebra history five"}},
		{"one second", "2026-10-21 18:00:05", "2026-10-21 18:00:05",
			[]string{"alice zebra five", "alice zebra five300", "zebra continuation of five300", "bob zebra history five"}},
		{"nothing within", "2026-10-22 00:00:00", "", nil},
		{"04.900 is before from 05", "2026-10-21 18:00:05", "2026-10-21 18:00:06",
			[]string{"alice zebra five", "alice zebra five300", "zebra continuation of five300", "alice zebra six", "bob zebra history five"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{Query: "zebra", TopK: 100, Episode: "episode-1", Conversation: "c1", From: tt.from, To: tt.to}
			got := sortedTexts(search(t, ix, req))
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(got, want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
}

func TestSearchTimeWindowInvalid(t *testing.T) {
	tests := []struct {
		from, to, field string
	}{
		{"2026-10-21", "", "from"},
		{"2026-10-21T18:00:00", "", "from"},
		{"", "2026-10-21 18:00:00,000", "to"},
		{"2026-10-21 18:00:06", "2026-10-21 18:00:05", "to"},
	}
	for _, tt := range tests {
		err := Request{Query: "x", From: tt.from, To: tt.to}.Validate()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("from %q to %q: %v, want an error naming %s", tt.from, tt.to, err, tt.field)
		}
	}
}
