// Package textsearch is a small in-memory full-text index ranked by BM25F:
// documents are made of weighted fields, terms are words split at
// punctuation, case changes and digits, lower-cased and stemmed with the
// Snowball English stemmer (github.com/kljensen/snowball), and a query's
// words are expanded with a few verb synonyms common in API operations
// (get/read/fetch, create/add, delete/remove, update/patch/edit, …).
//
// BM25F: Robertson and Zaragoza, "The Probabilistic Relevance Framework:
// BM25 and Beyond" (2009), §3.5: each field's term frequency is normalized
// by that field's length against its average, weighted, summed, and
// saturated once, with k1 = 1.2 and b = 0.75.
package textsearch

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// BM25 parameters.
const (
	k1 = 1.2
	b  = 0.75
)

// Field is one part of a document and how much a term in it counts
// relative to a term of weight 1.
type Field struct {
	Text   string
	Weight float64
}

// Index is built once with Add and then searched; Search is safe for
// concurrent use once adding is done. Every document should have the same
// fields in the same order: each field position has its own average
// length.
type Index struct {
	docs   []doc
	df     map[string]int // documents containing each term
	totals []float64      // by field position: the sum of lengths
}

type doc struct {
	fields []field
}

type field struct {
	weight float64
	tf     map[string]int
	len    int
}

// New returns an empty index.
func New() *Index { return &Index{df: map[string]int{}} }

// Add indexes a document made of fields and returns its number (0, 1, …,
// in the order added).
func (x *Index) Add(fields ...Field) int {
	d := doc{fields: make([]field, len(fields))}
	seen := map[string]bool{}
	for i, f := range fields {
		fd := field{weight: f.Weight, tf: map[string]int{}}
		for _, t := range Terms(f.Text) {
			fd.tf[t]++
			fd.len++
			if !seen[t] {
				seen[t] = true
				x.df[t]++
			}
		}
		d.fields[i] = fd
		for len(x.totals) <= i {
			x.totals = append(x.totals, 0)
		}
		x.totals[i] += float64(fd.len)
	}
	x.docs = append(x.docs, d)
	return len(x.docs) - 1
}

// Hit is a document's number and its score for a query.
type Hit struct {
	Doc   int
	Score float64
}

// Search returns the documents that match at least one term of query and
// that keep accepts (nil: every document), best first, at most limit of
// them. Equal scores keep the order of addition.
func (x *Index) Search(query string, keep func(doc int) bool, limit int) []Hit {
	terms := queryTerms(query)
	if len(terms) == 0 || len(x.docs) == 0 {
		return nil
	}
	n := float64(len(x.docs))
	avg := make([]float64, len(x.totals))
	for i, t := range x.totals {
		avg[i] = t / n
	}
	var hits []Hit
	for i, d := range x.docs {
		if keep != nil && !keep(i) {
			continue
		}
		score := 0.0
		for _, qt := range terms {
			// BM25F: each field's term frequency normalized by that
			// field's length, weighted, then saturated once.
			tf := 0.0
			for j, f := range d.fields {
				c := f.tf[qt.term]
				if c == 0 {
					continue
				}
				norm := 1.0
				if avg[j] > 0 {
					norm = 1 - b + b*float64(f.len)/avg[j]
				}
				tf += f.weight * float64(c) / norm
			}
			if tf == 0 {
				continue
			}
			df := float64(x.df[qt.term])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			score += qt.weight * idf * tf * (k1 + 1) / (tf + k1)
		}
		if score > 0 {
			hits = append(hits, Hit{Doc: i, Score: score})
		}
	}
	slices.SortStableFunc(hits, func(p, q Hit) int {
		switch {
		case p.Score > q.Score:
			return -1
		case p.Score < q.Score:
			return 1
		}
		return 0
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// synonyms expand a query's (stemmed) verbs: a synonym counts at half
// weight, so the word the user wrote still wins.
var synonyms = map[string][]string{
	"get":      {"read", "retriev", "fetch", "show"},
	"read":     {"get", "retriev"},
	"show":     {"get", "read", "list"},
	"fetch":    {"get", "read"},
	"retriev":  {"get", "read"},
	"find":     {"search", "list", "get"},
	"search":   {"find", "list"},
	"creat":    {"add", "new", "post"},
	"add":      {"creat", "new"},
	"make":     {"creat"},
	"new":      {"creat"},
	"open":     {"creat"},
	"delet":    {"remov"},
	"remov":    {"delet"},
	"updat":    {"patch", "modifi", "edit", "replac"},
	"edit":     {"updat", "patch"},
	"chang":    {"updat", "patch"},
	"modifi":   {"updat", "patch"},
	"cancel":   {"void", "delet"},
	"log":      {"logs"},
	"download": {"get", "archiv"},
}

// stopwords are words of a task that say nothing about which operation
// fits it.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "in": true, "of": true, "for": true, "to": true, "on": true, "by": true,
	"with": true, "and": true, "or": true, "is": true, "are": true, "be": true, "my": true, "me": true, "i": true,
	"it": true, "its": true, "this": true, "that": true, "from": true, "at": true, "as": true, "into": true,
	"please": true, "some": true, "which": true, "what": true, "who": true, "how": true, "do": true, "does": true,
}

// queryTerm is a term of a query and its weight.
type queryTerm struct {
	term   string
	weight float64
}

// queryTerms are the weighted terms of a query, in a fixed order (so that
// scores add up the same way every time): its own terms at weight 1, then
// their synonyms not already present at 0.5.
func queryTerms(q string) []queryTerm {
	var out []queryTerm
	seen := map[string]bool{}
	for _, w := range words(q) {
		if t := stem(w); !stopwords[w] && !seen[t] {
			seen[t] = true
			out = append(out, queryTerm{t, 1})
		}
	}
	for _, qt := range slices.Clone(out) {
		for _, s := range synonyms[qt.term] {
			if !seen[s] {
				seen[s] = true
				out = append(out, queryTerm{s, 0.5})
			}
		}
	}
	return out
}

// Terms splits text into words (see words) and stems each; a few long
// words APIs abbreviate become the abbreviation ("repository" and
// "repositories" → repo).
func Terms(text string) []string {
	ws := words(text)
	for i, w := range ws {
		ws[i] = stem(w)
	}
	return ws
}

// abbreviations maps the stems of words that API names abbreviate to the
// abbreviation's stem.
var abbreviations = map[string]string{
	"repositori": "repo",
	"organ":      "org",
	"configur":   "config",
	"applic":     "app",
	"inform":     "info",
	"environ":    "env",
	"messag":     "msg",
	"databas":    "db",
	"authent":    "auth",
}

func stem(w string) string {
	s := english.Stem(w, false)
	if a, ok := abbreviations[s]; ok {
		return a
	}
	return s
}

// words splits text into lower-case words: at every character that is not
// a letter or digit, between a lower-case letter and an upper-case one
// ("listPods" → list, pods), before the last upper-case letter of a run
// followed by a lower-case one ("HTTPServer" → http, server), and between
// letters and digits.
func words(text string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) > 0 {
			out = append(out, strings.ToLower(string(word)))
			word = word[:0]
		}
	}
	rs := []rune(text)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(word) > 0 {
			prev := word[len(word)-1]
			switch {
			case unicode.IsLower(prev) && unicode.IsUpper(r),
				unicode.IsDigit(prev) != unicode.IsDigit(r),
				unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
				flush()
			}
		}
		word = append(word, r)
	}
	flush()
	return out
}
