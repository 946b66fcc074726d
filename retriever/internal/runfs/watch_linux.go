package runfs

import (
	"fmt"
	"syscall"
)

// OrderedEvents: inotify queues each event before the call that made the
// change returns, one queue per watcher, read in order (see barrier).
const OrderedEvents = true

// Unwatchable returns why a folder's changes may come without events: a
// network or FUSE file system, where what another machine (or a FUSE
// server's other clients) writes raises no inotify event here. Such folders
// are polled.
func Unwatchable(path string) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return nil // the watch's own error says more
	}
	if name, ok := remoteFileSystems[uint32(st.Type)]; ok {
		return fmt.Errorf("a %s file system: changes made elsewhere raise no event here", name)
	}
	return nil
}

// remoteFileSystems are the file-system magic numbers (statfs f_type) whose
// changes may be made where inotify does not see them.
var remoteFileSystems = map[uint32]string{
	0x6969:     "NFS",
	0x517b:     "SMB",
	0xff534d42: "CIFS",
	0xfe534d42: "SMB2",
	0x65735546: "FUSE",
	0x01021997: "9P",
	0x00c36400: "Ceph",
	0x5346414f: "AFS",
	0x6b414653: "AFS",
	0x73757245: "Coda",
	0x564c:     "NCP",
	0x0bd00bd0: "Lustre",
	0x01161970: "GFS2",
	0x7461636f: "OCFS2",
	0x786f4256: "VirtualBox shared folder",
}
