// Package store keeps files for the persisted index of spec §15: a cache
// root holding one entry per run folder (its real path) and configuration,
// each entry a folder of immutable, checksummed blobs and a manifest that is
// the commit point. It knows files and bytes: never terms, segments, runs'
// rules or LSP. The retriever serialises its segments into blobs, hands them
// to an Entry, commits a manifest naming them with its own file table (the
// caller section; FileRecord is its typed form), and takes them back mapped.
//
// # Layout
//
//	<root>/                   0700: --cache-dir, $RUNLS_CACHE_DIR, $XDG_CACHE_HOME/runls, ~/.cache/runls
//	  <key>/                  0700: Key(real run path, configuration bytes), 32 hex digits
//	    lock                  0600: the writer's flock; its mtime is the entry's last use
//	    manifest              0600: the commit point (manifest.go)
//	    b-<24 hex>.blob       0600: immutable blobs (blob.go), named at random, never reused
//	    tmp-…, manifest.tmp   writes under way (removed at the next writer's open)
//	  .trash-…                an entry being removed
//
// Folders are created 0700 and files 0600 (set with chmod after creating,
// whatever the umask). A folder or file of ours found open to others is
// tightened and said in the open's Report; a folder another user owns is
// refused (ErrUnsafe) and the caller keeps no cache, as it cannot trust
// bytes another user may write.
//
// # How the others do it, and what is taken
//
// zoekt writes a shard to a temporary name and renames it into place, and
// maps the whole file read-only (indexfile_unix.go), trusting its table of
// contents without a checksum. tantivy keeps meta.json as the commit point
// (written atomically), a list of the files it made (.managed.json) for its
// garbage collection of files no living meta names, a writer lock and a
// meta lock, and a CRC footer on every file. Lucene's segments_N carries a
// generation, every file a header (codec, version) and a footer (CRC-32),
// and a reader that finds a file gone retries on the newer commit point.
// Here: zoekt's rename and map; tantivy's single commit file and collection
// (simpler: everything in an entry's folder is the store's, so no list of
// managed files is needed) and writer lock; Lucene's header and footer, the
// generation, and the reader's retry.
//
// # The commit protocol
//
// A blob is written to tmp-…, its header, content and footer, fsynced and
// renamed to its final name. Commit fsyncs the folder (the blob names are
// durable), writes manifest.tmp, fsyncs it, renames it over manifest and
// fsyncs the folder. A crash at any point leaves the old manifest, or the
// new one whole: rename is atomic, and the manifest's own checksum catches
// a torn one left by a file system that is not. Files the manifest does
// not name are removed when the next writer opens the entry.
//
// # Checks at open
//
// The manifest is decoded strictly (magic, version, lengths, CRC-32C over
// all of it, blob names of the store's shape, nothing after it) and must
// name this run and configuration. Every blob it names must exist with the
// exact length, a valid header and a footer whose checksum is the
// manifest's: O(1) a blob. With VerifyFull (the default) each blob's
// content checksum is also computed, which reads every byte once at memory
// speed; VerifyFrame leaves that to the caller: Blob.Check before a blob's
// first use (once a blob; a mismatch marks the snapshot corrupt, as a fault
// does, and the writer drops the commit), or Blob.CheckRange before a part
// of one is first used (the manifest keeps a CRC-32C of each 64 KiB chunk
// of every blob: an answer that reads a few pages of a blob checks those
// chunks only, once), Snapshot.CheckAll for the rest in the background
// (Close waits for a check under way). One bad file drops the
// whole commit (its blobs are one consistent state), and Report says what
// was dropped, once. Nothing here panics on any file's content.
//
// # Concurrency
//
// One writer per entry: Open takes an exclusive flock on lock without
// waiting. A second process (a CLI beside a server, a second server) gets
// the entry read-only, not no cache: it reads the committed state and
// indexes what changed since in its own memory, writing nothing, and may
// Upgrade when the writer has gone. The kernel drops a dead process's flock,
// so a kill -9 never leaves an entry locked. A lock taken on a lock file its
// path no longer names (the entry was cleared meanwhile) is retried.
//
// Any number of readers. A writer only ever creates new names and unlinks
// old ones; it never writes into, truncates or renames over a blob. On
// Linux (and any POSIX system) unlinking removes the name, not the file: the
// inode and its pages live while any descriptor or mapping holds them. So
// a reader's mapping of a blob that a later commit drops, or that a clear
// removes, keeps exactly the bytes it mapped until the reader unmaps it. A
// reader between reading the manifest and opening its blobs can find a blob
// gone (a commit and its collection came in between): it then reads the
// manifest again, and only when the manifest has not changed is the commit
// taken as corrupt. (Not so on NFS, where an unlinked open file becomes a
// .nfs… file and flock may be emulated: keep the cache on a local disk.)
//
// The one way a mapped page can change is from outside the store: someone
// truncating a blob. A read of a page past the new end then raises SIGBUS;
// Blob.Access turns it into an error (runtime/debug.SetPanicOnFault on the
// reading goroutine) and marks the snapshot corrupt, and the writer drops
// that commit.
//
// # Size
//
// Options.MaxBytes (--cache-max, DefaultMaxBytes) bounds the root: the
// writer's open and each commit remove the entries used longest ago (the
// lock file's mtime, set by every open and commit) until the root fits,
// never its own entry nor one another live writer holds.
package store
