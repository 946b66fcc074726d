package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// A cache entry's files cut under the real binary just after its guard's
// check (the runls_faultinject build, RUNLS_FAULT_AT), so that the read
// that follows faults on the mapping: in a search's answer, in an update's
// workers, in the debounced writer, and in `runls search`. The process
// lives, answers as with no cache, says so in one WARN, and the next open
// uses a clean entry.
func TestCacheFaultUnderTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t, "-tags", "runls_faultinject")
	query := []string{"--episode", "episode-2", "--conversation", "conv-1"}
	const appended = "2026-10-21 18:30:00 [running] [conv-1] Alice said: the database migration deploy is rolled back.\n"

	// first opens the run with the cache (no fault), writing its entry.
	first := func(t *testing.T) (run, dir string) {
		run, dir = copySample(t), filepath.Join(t.TempDir(), "cache")
		if code, _, errs := runBin(t, bin, append(append([]string{"search", "--cache-dir", dir}, query...), run, "deploy")...); code != 0 || warns(errs) != 0 {
			t.Fatalf("first open: exit %d, %s", code, errs)
		}
		return run, dir
	}
	// clean checks that the next open restores the entry with no WARN and
	// answers as with no cache.
	clean := func(t *testing.T, run, dir string) {
		args := append(append([]string{}, query...), run, "deploy", "database", "rolled")
		_, want, _ := runBin(t, bin, append([]string{"search", "--no-cache"}, args...)...)
		code, got, errs := runBin(t, bin, append([]string{"search", "--cache-dir", dir}, args...)...)
		if code != 0 || got != want || warns(errs) != 0 {
			t.Errorf("the next open: exit %d, WARNs %d, answers otherwise: %v\n%s", code, warns(errs), got != want, errs)
		}
	}
	oneWarn := func(t *testing.T, log string) {
		t.Helper()
		if n := strings.Count(log, "cut under the running server"); n != 1 || warns(log) != 1 || !strings.Contains(log, "fault reading the mapping") {
			t.Errorf("want one WARN of a fault on the mapping, log:\n%s", log)
		}
	}

	t.Run("cli", func(t *testing.T) {
		run, dir := first(t)
		args := append(append([]string{}, query...), run, "deploy", "database")
		_, want, wantErrs := runBin(t, bin, append([]string{"search", "--no-cache"}, args...)...)
		t.Setenv("RUNLS_FAULT_AT", "answer")
		code, got, errs := runBin(t, bin, append([]string{"search", "--cache-dir", dir}, args...)...)
		os.Unsetenv("RUNLS_FAULT_AT")
		if code != 0 || got != want || notes(errs) != wantErrs {
			t.Errorf("exit %d; output\n%s\nwant\n%s\nstderr %s", code, got, want, errs)
		}
		oneWarn(t, errs)
		clean(t, run, dir)
	})

	for _, point := range []string{"answer", "update", "write"} {
		t.Run("serve/"+point, func(t *testing.T) {
			run, dir := first(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			t.Setenv("RUNLS_FAULT_AT", point)
			conn, cmd, stderr, _ := startServe(ctx, t, bin, run, "--cache-dir", dir)
			os.Unsetenv("RUNLS_FAULT_AT")
			if point != "answer" {
				// An append the watcher reads: its update, then the write.
				f, err := os.OpenFile(filepath.Join(run, "episode-2", "alice", "alice.history"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(appended)
				f.Close()
			}
			ask := func(t *testing.T) (search, records map[string]any) {
				t.Helper()
				if _, err := conn.Call(ctx, "run/search", map[string]any{"query": "deploy database migration rolled"}, &search); err != nil {
					t.Fatalf("run/search: %v\n%s", err, stderr)
				}
				if _, err := conn.Call(ctx, "run/records", map[string]any{"episode": "episode-2"}, &records); err != nil {
					t.Fatalf("run/records: %v\n%s", err, stderr)
				}
				return search, records
			}
			for deadline := time.Now().Add(time.Minute); !strings.Contains(stderr.String(), "cut under the running server"); time.Sleep(20 * time.Millisecond) {
				if point != "write" {
					ask(t) // the faulted request
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the writer never faulted:\n%s", stderr)
				}
			}
			search, records := ask(t)

			ref, refCmd, refErr, _ := startServe(ctx, t, bin, run, "--no-cache")
			var wantSearch, wantRecords map[string]any
			if _, err := ref.Call(ctx, "run/search", map[string]any{"query": "deploy database migration rolled"}, &wantSearch); err != nil {
				t.Fatal(err)
			}
			if _, err := ref.Call(ctx, "run/records", map[string]any{"episode": "episode-2"}, &wantRecords); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(search) != fmt.Sprint(wantSearch) || fmt.Sprint(records) != fmt.Sprint(wantRecords) {
				t.Errorf("after the fault:\n%v\n%v\nwith no cache:\n%v\n%v", search, records, wantSearch, wantRecords)
			}
			stop(ctx, t, conn, cmd, stderr)
			stop(ctx, t, ref, refCmd, refErr)
			oneWarn(t, stderr.String())
			clean(t, run, dir)
		})
	}
}

// stop ends a server as an editor does, and fails when it did not end well.
func stop(ctx context.Context, t *testing.T, conn jsonrpc2.Conn, cmd *exec.Cmd, stderr *syncBuffer) {
	t.Helper()
	conn.Call(ctx, "shutdown", nil, nil)
	conn.Notify(ctx, "exit", nil)
	if err := cmd.Wait(); err != nil {
		t.Errorf("the server ended with %v\n%s", err, stderr)
	}
}
