package retriever

// This file holds the persisted index's view of an index (spec §15, issue
// 18): the committed state taken whole for the cache's writer, and put
// back at open.

import (
	"cmp"
	"maps"
	"slices"
)

// savedState is the committed state as the state blob holds it, and each
// segment's place in it. The caller holds the index's read lock: the dead
// bits are copied under it, as Kill writes them under the write lock.
func (ix *Index) savedState() (*savedIndex, map[*segment]uint32) {
	st := &savedIndex{
		nextID:   ix.nextID,
		agents:   slices.Clone(ix.agents),
		episodes: slices.Sorted(maps.Keys(ix.episodes)),
		dead:     make([][]uint64, len(ix.segments)),
		files:    slices.Collect(maps.Values(ix.files)),
	}
	place := make(map[*segment]uint32, len(ix.segments))
	for i, s := range ix.segments {
		place[s] = uint32(i)
		st.dead[i] = slices.Clone(s.DeadBits())
	}
	slices.SortFunc(st.files, func(a, b *fileState) int { return cmp.Compare(a.rel, b.rel) })
	ix.convMu.Lock()
	st.convs = slices.Clone(ix.convs)
	ix.convMu.Unlock()
	return st, place
}
