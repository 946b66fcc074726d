//go:build !linux

package runfs

// This file holds the change probe's instance off Linux: there is none,
// so every search takes the barrier's path (or walks).

import "errors"

type probeInstance struct{}

func newProbeInstance() (probeInstance, error) {
	return probeInstance{}, errors.New("no change probe on this system")
}

func (probeInstance) add(string) (int32, error)          { return 0, errProbeOff }
func (probeInstance) remove(int32)                       {}
func (probeInstance) close()                             {}
func (probeInstance) queued() (int, error)               { return 0, errProbeOff }
func (probeInstance) drain([]byte, func(wd int32)) error { return errProbeOff }
