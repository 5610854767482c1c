package textsearch

import (
	"slices"
	"testing"
)

func TestTerms(t *testing.T) {
	for in, want := range map[string][]string{
		"listCoreV1NamespacedPod":     {"list", "core", "v", "1", "namespac", "pod"},
		"HTTPServer_deletes-things":   {"http", "server", "delet", "thing"},
		"/repos/{owner}/{repo}/pulls": {"repo", "owner", "repo", "pull"},
		"Créer un élément":            {"créer", "un", "élément"},
		"":                            nil,
	} {
		if got := Terms(in); !slices.Equal(got, want) {
			t.Errorf("Terms(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSearchRanksByBM25: the document whose heavy field holds the query's
// words ranks first; a longer document with the same words ranks below a
// shorter one; synonyms count, at half weight; keep filters; equal scores
// keep the order of addition.
func TestSearchRanksByBM25(t *testing.T) {
	x := New()
	x.Add(Field{"listPets", 3}, Field{"List all pets in the store", 1})                         // 0
	x.Add(Field{"createPet", 3}, Field{"Create a pet", 1})                                      // 1
	x.Add(Field{"listPetsForAllStores", 3}, Field{"List all pets of every store and owner", 1}) // 2
	x.Add(Field{"deleteOrder", 3}, Field{"Remove an order", 1})                                 // 3
	x.Add(Field{"readOrder", 3}, Field{"Read an order", 1})                                     // 4
	x.Add(Field{"getOrder", 3}, Field{"Get an order", 1})                                       // 5
	docs := func(hits []Hit) []int {
		var out []int
		for _, h := range hits {
			out = append(out, h.Doc)
		}
		return out
	}
	for _, tc := range []struct {
		q    string
		keep func(int) bool
		want []int
	}{
		{"list the pets", nil, []int{0, 2, 1}},
		{"make a new pet", nil, []int{1, 0, 2}},
		{"remove order 42", nil, []int{3, 4, 5}},
		{"get the order", nil, []int{5, 4, 3}},
		{"list the pets", func(d int) bool { return d != 0 }, []int{2, 1}},
		{"the of and", nil, nil},
	} {
		if got := docs(x.Search(tc.q, tc.keep, 10)); !slices.Equal(got, tc.want) {
			t.Errorf("Search(%q) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := docs(x.Search("order", nil, 2)); !slices.Equal(got, []int{3, 4}) {
		t.Errorf("limit 2: %v", got)
	}
}
