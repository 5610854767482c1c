package openapi

import (
	"encoding/json"
	"fmt"
	"math"
)

// ExtensionCost is the operation extension that sets a tool's Cost: a
// non-negative whole number of quota units for one call.
const ExtensionCost = "x-restmcp-cost"

// extensionCost reads the x-restmcp-cost extension. Absent gives 0 ("use the
// plan's cost or 1"); a value that is not a non-negative whole number is an
// error, so that a typo never bills at the wrong price silently.
func extensionCost(ext map[string]any) (int64, error) {
	v, ok := ext[ExtensionCost]
	if !ok || v == nil {
		return 0, nil
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
			return 0, fmt.Errorf("%s: %q is not a number", ExtensionCost, n)
		}
		f = x
	default:
		return 0, fmt.Errorf("%s: must be a non-negative whole number, got %v", ExtensionCost, v)
	}
	if f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, fmt.Errorf("%s: must be a non-negative whole number up to %d, got %v", ExtensionCost, math.MaxInt32, v)
	}
	return int64(f), nil
}
