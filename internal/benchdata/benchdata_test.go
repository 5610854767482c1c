package benchdata

import (
	"encoding/json"
	"testing"
)

// TestAnswer: the answer is valid JSON, at least as large as asked and
// less than one item larger, and starts as the list object it is.
func TestAnswer(t *testing.T) {
	for _, size := range []int{1, 1000, 1 << 20} {
		b := Answer(size)
		if !json.Valid(b) || len(b) < size || len(b) > size+200 {
			t.Fatalf("Answer(%d): %d bytes, valid %v", size, len(b), json.Valid(b))
		}
	}
	const first = `{"total":0,"items":[{"id":0,"name":"item number 0","note":"a \"quoted\" word\nand a line <b>é</b>","price":12.50,"tags":["a","b","c"],"owner":{"login":"octocat","site_admin":false,"score":null}}]}`
	if got := string(Answer(21)); got != first { // one byte past the 20-byte opening: one item
		t.Fatalf("Answer(21) = %s\nwant %s", got, first)
	}
}
