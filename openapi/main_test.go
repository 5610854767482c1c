package openapi

import (
	"testing"

	"github.com/restmcp/restmcp/internal/testenv"
)

// TestMain ends the run with one line naming the tests skipped for want of
// Redis or the corpus.
func TestMain(m *testing.M) { testenv.Main(m) }
