package yamltree

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// MaxAliasNodes is the most nodes that YAML aliases may add to a document
// (docs/security.md H27). An alias (*name) stands for its anchor's whole
// value (&name), so nine levels of nine aliases in 565 bytes (the "billion
// laughs") read as a billion nodes: converting such a tree to JSON, or
// walking it, grows without bound. Every document restmcp reads as YAML
// (the OpenAPI document, overlays, files it refers to, the plans file) is
// checked with [CheckAliases] before anything walks it. A million nodes is
// some 20 MB of JSON, many times what real documents add through anchors
// (in the corpus: 18 aliases at most).
const MaxAliasNodes = 1_000_000

// ErrAliasBudget is wrapped by the error of a document whose aliases add
// more than MaxAliasNodes nodes.
var ErrAliasBudget = errors.New("YAML aliases expand the document past its budget")

// CheckAliases returns an error wrapping ErrAliasBudget when reading root
// with every alias replaced by its anchored value would meet more than
// MaxAliasNodes nodes beyond those written, or when an alias stands inside
// its own anchor's value (a cycle, named by its line). It reads
// each written node once, whatever the aliases (an anchored value's size is
// computed once and reused), and allocates nothing for a document without
// aliases.
func CheckAliases(root *yaml.Node) error {
	written, aliases := countNodes(root)
	if aliases == 0 {
		return nil
	}
	s := sizer{memo: map[*yaml.Node]int64{}, open: map[*yaml.Node]bool{}, limit: written + MaxAliasNodes}
	n, err := s.size(root)
	if err != nil {
		return err
	}
	if n > s.limit {
		return fmt.Errorf("%w: its %d aliases (*name) make its %d written nodes read as more than %d; at most %d more are allowed",
			ErrAliasBudget, aliases, written, s.limit, MaxAliasNodes)
	}
	return nil
}

// countNodes counts the nodes written in the tree below n (aliases not
// followed) and the alias nodes among them.
func countNodes(n *yaml.Node) (nodes, aliases int64) {
	nodes = 1
	if n.Kind == yaml.AliasNode {
		return 1, 1
	}
	for _, c := range n.Content {
		cn, ca := countNodes(c)
		nodes += cn
		aliases += ca
	}
	return nodes, aliases
}

// sizer computes the size of a tree read through its aliases, stopping
// once it passes limit.
type sizer struct {
	memo  map[*yaml.Node]int64 // anchored values already sized
	open  map[*yaml.Node]bool  // anchored values being sized (cycle check)
	limit int64
}

func (s *sizer) size(n *yaml.Node) (int64, error) {
	if n.Kind == yaml.AliasNode {
		t := n.Alias
		if t == nil {
			return 1, nil
		}
		if v, ok := s.memo[t]; ok {
			return v, nil
		}
		if s.open[t] {
			return 0, fmt.Errorf("%w: line %d: the alias *%s stands inside the value of its own anchor &%s, so it would expand forever",
				ErrAliasBudget, n.Line, n.Value, t.Anchor)
		}
	}
	t := n
	if n.Kind == yaml.AliasNode {
		t = n.Alias
	}
	s.open[t] = true
	total := int64(1)
	for _, c := range t.Content {
		v, err := s.size(c)
		if err != nil {
			return 0, err
		}
		if total += v; total > s.limit {
			total = s.limit + 1 // saturate: the caller reports the budget
			break
		}
	}
	delete(s.open, t)
	if t.Anchor != "" || n.Kind == yaml.AliasNode {
		s.memo[t] = total
	}
	return total, nil
}
