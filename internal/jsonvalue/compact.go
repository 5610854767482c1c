package jsonvalue

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// Compact is JSON text as AppendCompact writes it: valid, without
// insignificant white space, valid UTF-8. It encodes as itself
// (MarshalJSON), so a result holding it is encoded without a tree, by
// encoding/json and by Append alike. It is a string, so that it can be
// the part of an answer's text that holds the value (Compacted), with
// neither a copy nor an alias of a buffer.
type Compact string

// MarshalJSON returns c itself; an empty Compact is null.
func (c Compact) MarshalJSON() ([]byte, error) {
	if c == "" {
		return []byte("null"), nil
	}
	return []byte(c), nil
}

// text is what the compactor reads: an answer's text as a string, or
// bytes.
type text interface{ string | []byte }

// maxCompactDepth is the deepest nesting AppendCompact accepts, the bound
// encoding/json's json.Valid (and so Parse) sets.
const maxCompactDepth = 10000

// ErrTooDeep is AppendCompact's error for text nested deeper than
// encoding/json accepts (10,000 arrays and objects).
var ErrTooDeep = errors.New("JSON nested more than 10000 levels deep")

// AppendCompact appends src, one JSON value (RFC 8259), to dst in one pass
// and without a tree, with the white space between tokens dropped. Every
// token keeps its bytes (a string its escapes, a number its literal,
// object members their order, duplicates included), except that each
// byte of invalid UTF-8 in a string is written as \ufffd (the U+FFFD that
// Parse decodes it to), so the result is valid UTF-8 (RFC 8259 §8.1) and
// Parse of it equals Parse(src).
//
// The cost is linear in len(src), with one allocation for each 64 levels
// of nesting beyond the first 64. The error is ErrNotJSON for text that
// json.Valid rejects and ErrTooDeep past 10,000 levels; dst is then
// returned unchanged.
func AppendCompact(dst, src []byte) ([]byte, error) {
	c := compactor[[]byte]{dst: dst, src: src}
	end, err := c.scan()
	if err != nil {
		return dst, err
	}
	return append(c.dst, src[c.from:end]...), nil
}

// Compacted is AppendCompact for text, without a copy where none is
// needed: when src's value has no white space between its tokens and its
// strings are valid UTF-8 (an API's compact answer, with or without white
// space around it), it returns the part of src that holds the value.
// Otherwise it returns the compact text, built once in a new string of
// len(src) bytes. When w is not nil, it is told of the values in the same
// pass (see [Walker]); on an error, it may have been told of some. The
// errors are AppendCompact's.
func Compacted(src string, w Walker) (Compact, error) {
	c := compactor[string]{src: src, toString: true, walker: w}
	end, err := c.scan()
	if err != nil {
		return "", err
	}
	if !c.copied {
		return Compact(src[c.from:end]), nil
	}
	c.out.WriteString(src[c.from:end])
	return Compact(c.out.String()), nil
}

// CompactedBytes is Compacted for text held in bytes: the value is the
// part of src that holds it when it is compact already (not a copy: it
// shares src's memory), otherwise the compact text in a new slice. A
// walker that is a [BytesWalker] is told of keys and numbers as parts of
// src, without a copy.
func CompactedBytes(src []byte, w Walker) ([]byte, error) {
	c := compactor[[]byte]{src: src, walker: w}
	c.bw, _ = w.(BytesWalker)
	end, err := c.scan()
	if err != nil {
		return nil, err
	}
	if !c.copied {
		return src[c.from:end], nil
	}
	return append(c.dst, src[c.from:end]...), nil
}

// A BytesWalker is a Walker that can be told of the values of text held in
// bytes (CompactedBytes) without their keys and numbers becoming strings:
// key and num are as Value's, parts of the text, valid only during the
// call.
type BytesWalker interface {
	Walker
	ValueBytes(key []byte, kind byte, num []byte) (enter bool)
}

// A Walker follows the values of the text Compacted checks, in the
// text's order and in the same pass, to judge them as they go by (the
// output-schema check in openapi) without a second reading.
type Walker interface {
	// Value is told of each value at the top and in each container the
	// walker entered. key is the member's key token as the text has it
	// (quotes and escapes included) for an object member, else empty; kind
	// is the value's first byte ('{', '[', '"', 't', 'f', 'n', or '-' or
	// a digit for a number); num is a number's literal, else empty. For '{'
	// and '[' it returns whether to enter the container: to be told of its
	// values, then of its end.
	Value(key string, kind byte, num string) (enter bool)
	// Close is the end of the innermost container the walker entered.
	Close()
}

// compactor is the state of one compaction: the output is dst (or out)
// followed by src[from:], less what later cuts remove.
type compactor[T text] struct {
	dst      []byte
	toString bool            // the output goes to out, not to dst (Compacted)
	out      strings.Builder // the output when toString
	src      T
	from     int  // where the part of src not yet written out starts
	copied   bool // something was cut, so the output is in dst or out

	walker           Walker
	bw               BytesWalker // walker, told through ValueBytes (CompactedBytes: src is bytes)
	entered          int         // open containers the walker entered: the outermost ones
	keyStart, keyEnd int         // the last key token read, src[keyStart:keyEnd]
}

// tell tells the walker of a value of kind b (num: a number's literal,
// src[numStart:numEnd]) inside the containers of stack, and reports
// whether it enters the value. The caller checks first that there is a
// walker and that it entered every container of stack. (From Compacted
// the conversions to string copy nothing; from CompactedBytes a walker
// that is not a BytesWalker gets copies.)
func (c *compactor[T]) tell(stack []byte, b byte, numStart, numEnd int) bool {
	if c.bw != nil {
		return c.tellBytes(stack, b, numStart, numEnd)
	}
	var key string
	if len(stack) > 0 && stack[len(stack)-1] == '{' {
		key = string(c.src[c.keyStart:c.keyEnd])
	}
	return c.walker.Value(key, b, string(c.src[numStart:numEnd]))
}

// tellBytes is tell through the BytesWalker (CompactedBytes), where src
// is bytes already: the conversions copy nothing.
func (c *compactor[T]) tellBytes(stack []byte, b byte, numStart, numEnd int) bool {
	var key []byte
	if len(stack) > 0 && stack[len(stack)-1] == '{' {
		key = []byte(c.src[c.keyStart:c.keyEnd])
	}
	return c.bw.ValueBytes(key, b, []byte(c.src[numStart:numEnd]))
}

// cut writes src[from:i] out and moves from to j: src[i:j] is not
// output, and rep is written in its place.
func (c *compactor[T]) cut(i, j int, rep string) {
	if c.toString {
		if !c.copied {
			c.out.Grow(len(c.src))
		}
		c.out.WriteString(string(c.src[c.from:i])) // T is string here: no copy
		c.out.WriteString(rep)
	} else {
		if !c.copied && c.dst == nil {
			c.dst = make([]byte, 0, len(c.src)) // sized once (CompactedBytes)
		}
		c.dst = append(c.dst, c.src[c.from:i]...)
		c.dst = append(c.dst, rep...)
	}
	c.copied = true
	c.from = j
}

// space returns the offset after the white space at src[i:], cutting it.
// Callers test src[i] <= ' ' first: compact text has none, and this test
// inline is what makes it cheap.
func (c *compactor[T]) space(i int) int {
	j := skipSpace(c.src, i)
	if j > i {
		c.cut(i, j, "")
	}
	return j
}

// scan checks the text and makes the cuts; the output is dst followed by
// src[from:end].
func (c *compactor[T]) scan() (end int, err error) {
	src := c.src
	var small [64]byte
	stack := small[:0] // '{' or '[' for each open container
	i := skipSpace(src, 0)
	c.from = i
	for {
		// A value starts at src[i].
		if i >= len(src) {
			return 0, ErrNotJSON
		}
		b := src[i]
		if c.walker != nil && len(stack) == c.entered && (b < '0' || b > '9') && b != '-' {
			if c.tell(stack, b, i, i) && (b == '{' || b == '[') {
				c.entered++ // the container is pushed below
			}
		}
		switch b {
		case '{', '[':
			if len(stack) == maxCompactDepth {
				return 0, ErrTooDeep
			}
			if i++; i < len(src) && src[i] <= ' ' {
				i = c.space(i)
			}
			if i < len(src) && src[i] == b+2 { // '}' is '{'+2, ']' is '['+2
				i++
				if c.entered > len(stack) {
					c.entered--
					c.walker.Close()
				}
				break
			}
			stack = append(stack, b)
			if b == '{' {
				if i = c.key(i); i < 0 {
					return 0, ErrNotJSON
				}
			}
			continue
		case '"':
			i = c.str(i)
		case 't':
			i = literal(src, i, "true")
		case 'f':
			i = literal(src, i, "false")
		case 'n':
			i = literal(src, i, "null")
		default:
			start := i
			if i = scanNumber(src, i); i > 0 && c.walker != nil && len(stack) == c.entered {
				c.tell(stack, b, start, i)
			}
		}
		if i < 0 {
			return 0, ErrNotJSON
		}
		// After a value: the end of the text, or a comma or the close of
		// each container the value ends.
		for {
			if len(stack) == 0 {
				if skipSpace(src, i) == len(src) {
					return i, nil
				}
				return 0, ErrNotJSON
			}
			if i < len(src) && src[i] <= ' ' {
				i = c.space(i)
			}
			if i >= len(src) {
				return 0, ErrNotJSON
			}
			top := stack[len(stack)-1]
			if src[i] == top+2 {
				if c.entered == len(stack) {
					c.entered--
					c.walker.Close()
				}
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if src[i] != ',' {
				return 0, ErrNotJSON
			}
			if i++; i < len(src) && src[i] <= ' ' {
				i = c.space(i)
			}
			if top == '{' {
				if i = c.key(i); i < 0 {
					return 0, ErrNotJSON
				}
			}
			break
		}
	}
}

// key checks an object member's key and colon at src[i] and returns the
// offset of the member's value, or -1.
func (c *compactor[T]) key(i int) int {
	if i >= len(c.src) || c.src[i] != '"' {
		return -1
	}
	src := c.src
	c.keyStart = i
	if i = c.str(i); i < 0 {
		return -1
	}
	c.keyEnd = i
	if i < len(src) && src[i] <= ' ' {
		i = c.space(i)
	}
	if i >= len(src) || src[i] != ':' {
		return -1
	}
	if i++; i < len(src) && src[i] <= ' ' {
		i = c.space(i)
	}
	return i
}

// str checks the string token at src[i] (its opening quote) and returns
// the offset after its closing quote, or -1. Each byte of invalid UTF-8 is
// cut and written as \ufffd.
func (c *compactor[T]) str(i int) int {
	src := c.src
	i++
	for {
		for i < len(src) && verbatim[src[i]] { // inline: most strings are short
			i++
		}
		if i >= len(src) {
			return -1
		}
		switch b := src[i]; {
		case b == '"':
			return i + 1
		case b == '\\':
			_, n, ok := decodeEscape(src[i:])
			if !ok {
				return -1
			}
			i += n
		case b < 0x20:
			return -1
		default:
			r, size := utf8.DecodeRune([]byte(src[i:min(i+utf8.UTFMax, len(src))])) // no copy for bytes; 4 on the stack for a string
			if r == utf8.RuneError && size == 1 {
				c.cut(i, i+1, `\ufffd`)
			}
			i += size
		}
	}
}

// verbatim is true for the bytes a compacted string keeps without a
// further look: printable ASCII other than " and \.
var verbatim = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func skipSpace[T text](src T, i int) int {
	for i < len(src) {
		switch src[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// literal returns the offset after lit at src[i], or -1.
func literal[T text](src T, i int, lit string) int {
	if len(src)-i < len(lit) || string(src[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanNumber returns the end of the number at src[i] (RFC 8259 §6), or -1.
func scanNumber[T text](src T, i int) int {
	if i < len(src) && src[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(src) && '0' <= src[i] && src[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i >= len(src):
		return -1
	case src[i] == '0':
		i++
	case '1' <= src[i] && src[i] <= '9':
		digits()
	default:
		return -1
	}
	if i < len(src) && src[i] == '.' {
		i++
		if digits() == 0 {
			return -1
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if digits() == 0 {
			return -1
		}
	}
	return i
}
