package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"runls/lsp"
)

// runServe is `runls serve`: the language server on stdin and stdout (spec §9).
// It returns the process's exit code: 0 after shutdown and exit, 1 when the
// client ended the connection without shutdown, 2 for bad flags.
func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Bool("stdio", true, "speak LSP over stdin and stdout (the only transport, and the default)")
	logFile := fs.String("log-file", "", "append the log to this `file` instead of stderr")
	logLevel := fs.String("log-level", "info", "log `level`: debug, info, warn or error")
	cache := addCacheFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = io.WriteString(stdout, usageText+"\n")
			return 0
		}
		return usageError(stderr, "serve: %v", err)
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "serve: unexpected argument %q (the run folder is the editor's workspace folder)", fs.Arg(0))
	}
	level, err := zapcore.ParseLevel(*logLevel)
	if err != nil || level < zapcore.DebugLevel || level > zapcore.ErrorLevel {
		return usageError(stderr, "serve: bad --log-level %q: want debug, info, warn or error", *logLevel)
	}

	logOut := zapcore.AddSync(stderr)
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return usageError(stderr, "serve: bad --log-file: %v", err)
		}
		defer f.Close()
		logOut = zapcore.AddSync(f)
	}
	encCfg := zap.NewDevelopmentEncoderConfig()
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	logger := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(encCfg), zapcore.Lock(logOut), level))
	defer func() { _ = logger.Sync() }()
	if stop := startCPUProfile(logger); stop != nil {
		defer stop()
	}
	defer writeHeapProfile(logger)
	defer watchHeapPeak(logger)()

	if f, ok := stdin.(*os.File); ok {
		stdin = pollable(f)
	}
	if f, ok := stdout.(*os.File); ok {
		stdout = pollable(f)
	}
	cacheOpts, err := cache.options(func(err error) { logger.Warn(err.Error()) })
	if err != nil {
		return usageError(stderr, "serve: %v", err)
	}
	err = lsp.Serve(ctx, stdioConn{in: stdin, out: stdout}, lsp.Options{Logger: logger, Version: buildVersion(), Cache: cacheOpts, BoundMemory: true})
	if err != nil {
		logger.Info("exiting with code 1", zap.Error(err))
		return 1
	}
	return 0
}

// cpuProfileEnv names a file to write a CPU profile of the whole serve to
// (pprof's format), for bench/serve.sh; a tool for measuring, so an env
// variable rather than a flag users see.
const cpuProfileEnv = "RUNLS_CPUPROFILE"

// startCPUProfile starts the CPU profile cpuProfileEnv asks for, and returns
// what stops it; nil when none is asked for or it cannot start (logged).
func startCPUProfile(logger *zap.Logger) func() {
	path := os.Getenv(cpuProfileEnv)
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		logger.Warn("no CPU profile", zap.String(cpuProfileEnv, path), zap.Error(err))
		return nil
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			logger.Warn("writing the CPU profile", zap.String(cpuProfileEnv, path), zap.Error(err))
		}
	}
}

// heapProfileEnv names a file to write a heap profile to (pprof's format)
// when serve ends: what is live then and, as alloc_space, every allocation
// of the process's life, for bench/serve.sh (see cpuProfileEnv).
const heapProfileEnv = "RUNLS_HEAPPROFILE"

// writeHeapProfile writes the heap profile heapProfileEnv asks for, if any.
func writeHeapProfile(logger *zap.Logger) {
	path := os.Getenv(heapProfileEnv)
	if path == "" {
		return
	}
	if err := writeProfileFile(path, pprof.Lookup("allocs")); err != nil {
		logger.Warn("no heap profile", zap.String(heapProfileEnv, path), zap.Error(err))
	}
}

// heapPeakProfileEnv names files to write heap profiles to as the live heap
// grows: one each time the live heap (as of the last collection, sampled
// every 50 ms) passed the last one written by a twentieth, named with ".N"
// after the name, N counting from 1 (the last before the shutdown's is
// the peak of a first index's batches, which RUNLS_HEAPPROFILE's at exit
// misses: issue 33). "PID" in the name is the process's id:
// bench/reopen.sh starts several servers in turn.
const heapPeakProfileEnv = "RUNLS_HEAPPROFILE_PEAK"

// watchHeapPeak starts the sampling heapPeakProfileEnv asks for, if any,
// and returns what stops it.
func watchHeapPeak(logger *zap.Logger) (stop func()) {
	path := os.Getenv(heapPeakProfileEnv)
	if path == "" {
		return func() {}
	}
	path = strings.ReplaceAll(path, "PID", strconv.Itoa(os.Getpid()))
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		var written uint64
		n := 0
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(live)
			if l := live[0].Value.Uint64(); l > written*21/20 {
				n++
				if err := writeProfileFile(fmt.Sprintf("%s.%d", path, n), pprof.Lookup("heap")); err != nil {
					logger.Warn("no heap profile", zap.String(heapPeakProfileEnv, path), zap.Error(err))
					return
				}
				written = l
			}
		}
	}()
	return func() { close(done); <-finished }
}

// writeProfileFile writes p to path whole (through a file beside it).
func writeProfileFile(path string, p *pprof.Profile) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	err = p.WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(path+".tmp", path)
	}
	return err
}

// stdioConn joins stdin and stdout into the connection the server speaks on.
// Closing it closes stdin, which ends a read blocked on a pipe.
type stdioConn struct {
	in  io.Reader
	out io.Writer
}

func (c stdioConn) Read(p []byte) (int, error)  { return c.in.Read(p) }
func (c stdioConn) Write(p []byte) (int, error) { return c.out.Write(p) }
func (c stdioConn) Close() error {
	if cl, ok := c.in.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// buildVersion is the module version the binary was built from, if known.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}
