package openapi

import (
	"encoding/json"
	"math"
)

// ExtensionCost is the operation extension that sets a tool's Cost.
const ExtensionCost = "x-restmcp-cost"

// extensionCost reads the x-restmcp-cost extension: a non-negative whole
// number. Anything else (absent, negative, fractional, not a number) gives 0,
// which means "use the plan's cost or 1".
func extensionCost(ext map[string]any) int64 {
	v, ok := ext[ExtensionCost]
	if !ok {
		return 0
	}
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case int:
		f = float64(n)
	case int64:
		f = float64(n)
	case json.Number:
		x, err := n.Float64()
		if err != nil {
			return 0
		}
		f = x
	default:
		return 0
	}
	if f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0
	}
	return int64(f)
}
