package web

import (
	"fmt"
	"slices"
	"sort"

	"github.com/mvserver/mvserver/catalog"
)

// The lineage graph of a dataset: everything it reads (through views,
// down to base tables) to its left, everything that reads it to its right,
// in columns by distance, drawn as inline SVG with a link on each dataset.

const (
	lineageNodeW   = 190
	lineageNodeH   = 40
	lineageColGap  = 70
	lineageRowGap  = 14
	lineageMargin  = 10
	lineageMaxNode = 80 // beyond this the graph is cut (said under it)
)

// hiddenName stands for the name of a relation the console's user may
// not read.
const hiddenName = "(no privilege)"

type lineageNode struct {
	ID           uint32
	Name         string // schema.name
	Label        string // name, shortened to fit
	Kind         string
	KindClass    string
	URL          string // "" when it has no page
	Focus        bool
	Level        int
	X, Y, W, H   int
	TextX, TextY int
	KindY        int
}

type lineageEdge struct {
	From, To uint32
	Path     string
}

type lineageGraph struct {
	Nodes     []*lineageNode
	Edges     []lineageEdge
	Width     int
	Height    int
	Truncated bool
}

// kindLabel names a relation kind for people.
func kindLabel(k catalog.ObjectKind) string {
	switch k {
	case catalog.KindMaterializedView:
		return "materialized view"
	case catalog.KindStreamingTable:
		return "streaming table"
	case catalog.KindView:
		return "view"
	}
	return "table"
}

// buildLineage lays out the graph around focus. A dataset links to its
// page only when canSee allows its user to read that page (nil: every
// one). A relation the user may not read is shown without its name
// (hiddenName), unless the focus reads it directly: its definition,
// which the page shows, names those anyway.
func buildLineage(cat *catalog.Catalog, focus *catalog.Table, canSee func(*catalog.Table) bool) *lineageGraph {
	g := &lineageGraph{}
	dependents := map[uint32][]uint32{}
	for _, t := range cat.Tables() {
		for _, d := range t.DependsOn {
			dependents[d] = append(dependents[d], t.ID)
		}
	}
	sources := func(id uint32) []uint32 {
		if t, ok := cat.Table(id); ok {
			return t.DependsOn
		}
		return nil
	}
	// The relations the focus reads, transitively, and those reading it.
	upSet := reach(focus.ID, sources, lineageMaxNode/2, &g.Truncated)
	downSet := reach(focus.ID, func(id uint32) []uint32 { return dependents[id] }, lineageMaxNode/2, &g.Truncated)
	// A node's level is its longest path to (upstream: minus) or from the
	// focus within its side, so every edge points right.
	level := map[uint32]int{focus.ID: 0}
	upDist := longestPaths(focus.ID, upSet, func(id uint32) []uint32 { return dependents[id] })
	for id, d := range upDist {
		level[id] = -d
	}
	for id, d := range longestPaths(focus.ID, downSet, sources) {
		if _, up := upSet[id]; !up {
			level[id] = d
		}
	}

	byID := map[uint32]*lineageNode{}
	cols := map[int][]*lineageNode{}
	minLevel, maxLevel := 0, 0
	for id, l := range level {
		t, ok := cat.Table(id)
		if !ok {
			continue
		}
		n := &lineageNode{ID: id, Name: cat.QualifiedName(t), Kind: kindLabel(t.Kind), KindClass: string(t.Kind), Focus: id == focus.ID, Level: l}
		visible := n.Focus || canSee == nil || canSee(t)
		if !visible && !slices.Contains(focus.DependsOn, id) {
			n.Name = hiddenName
		}
		n.Label = shorten(n.Name, 26)
		if t.IsDataset() && !n.Focus && visible {
			n.URL = datasetURL(cat, t)
		}
		byID[id] = n
		cols[l] = append(cols[l], n)
		minLevel, maxLevel = min(minLevel, l), max(maxLevel, l)
	}
	tallest := 0
	for _, c := range cols {
		tallest = max(tallest, len(c))
	}
	g.Height = 2*lineageMargin + tallest*lineageNodeH + (tallest-1)*lineageRowGap
	g.Width = 2*lineageMargin + (maxLevel-minLevel+1)*lineageNodeW + (maxLevel-minLevel)*lineageColGap
	for l := minLevel; l <= maxLevel; l++ {
		c := cols[l]
		sort.Slice(c, func(i, j int) bool { return c[i].Name < c[j].Name })
		colH := len(c)*lineageNodeH + (len(c)-1)*lineageRowGap
		top := (g.Height - colH) / 2
		for i, n := range c {
			n.W, n.H = lineageNodeW, lineageNodeH
			n.X = lineageMargin + (l-minLevel)*(lineageNodeW+lineageColGap)
			n.Y = top + i*(lineageNodeH+lineageRowGap)
			n.TextX, n.TextY, n.KindY = n.X+10, n.Y+17, n.Y+32
			g.Nodes = append(g.Nodes, n)
		}
	}
	for _, n := range g.Nodes {
		t, _ := cat.Table(n.ID)
		for _, d := range t.DependsOn {
			src, ok := byID[d]
			if !ok || src.Level >= n.Level {
				continue
			}
			x1, y1 := src.X+src.W, src.Y+src.H/2
			x2, y2 := n.X-4, n.Y+n.H/2
			mid := (x1 + x2) / 2
			g.Edges = append(g.Edges, lineageEdge{From: d, To: n.ID, Path: fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, mid, y1, mid, y2, x2, y2)})
		}
	}
	sort.Slice(g.Edges, func(i, j int) bool {
		if g.Edges[i].From != g.Edges[j].From {
			return g.Edges[i].From < g.Edges[j].From
		}
		return g.Edges[i].To < g.Edges[j].To
	})
	return g
}

// shorten cuts s to n characters with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// reach is the set of relations reachable from id through next (id
// excluded), at most limit of them.
func reach(id uint32, next func(uint32) []uint32, limit int, truncated *bool) map[uint32]bool {
	seen := map[uint32]bool{}
	queue := []uint32{id}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, n := range next(cur) {
			if n == id || seen[n] {
				continue
			}
			if len(seen) >= limit {
				*truncated = true
				return seen
			}
			seen[n] = true
			queue = append(queue, n)
		}
	}
	return seen
}

// longestPaths gives each node of set its longest distance from root,
// where prev(n) are the nodes a step closer to root (memoized; a cycle,
// which CREATE rejects, is cut).
func longestPaths(root uint32, set map[uint32]bool, prev func(uint32) []uint32) map[uint32]int {
	dist := map[uint32]int{}
	busy := map[uint32]bool{}
	var walk func(n uint32) int
	walk = func(n uint32) int {
		if n == root {
			return 0
		}
		if d, ok := dist[n]; ok {
			return d
		}
		if busy[n] {
			return 0
		}
		busy[n] = true
		best := 0
		for _, p := range prev(n) {
			if p == root || set[p] {
				best = max(best, walk(p)+1)
			}
		}
		busy[n] = false
		dist[n] = best
		return best
	}
	for n := range set {
		walk(n)
	}
	return dist
}
