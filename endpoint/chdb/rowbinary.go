//go:build chdb

package chdb

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// resultFormat is the format the executor asks chDB to answer a query in:
// a header of the columns' names and ClickHouse type names, then each row's
// values in binary, which decode reads straight into Go values (no text
// to parse back).
const resultFormat = "RowBinaryWithNamesAndTypes"

// errShort is the error of an answer that ends inside a value.
var errShort = errors.New("the answer ends inside a value")

// errEmptyRow is the error of an answer whose row took no bytes (its
// columns' values are all of none, as FixedString(0)'s) and that goes on
// after it: rows of it would be read for ever.
var errEmptyRow = errors.New("a row of no bytes before the answer's end")

// reader reads RowBinary values from an answer: b is s's bytes, read
// only. The answer may be memory the caller frees once decode returns
// (chDB's own buffer, see read): nothing decode answers points into it;
// each string value is copied out of it into the reader's strings (see
// strArena).
type reader struct {
	s   string
	b   []byte
	off int
	boxes
}

// boxes puts values into interface values from blocks, one allocation a
// block where Go's conversion to any makes one a value (most of what
// reading a large answer costs): the interface points into the block, as
// it would point to a value of its own. A block is never written again
// once a value of it is boxed. size is how many values a new block holds:
// decode sets it to the rows of the block of rows it reads, so that a
// small answer allocates little and a large one few blocks. Strings are
// boxed from strs.
type boxes struct {
	size  int
	strs  strArena
	ints  []int64
	flts  []float64
	times []time.Time
}

// strArena boxes strings into chunks of memory the garbage collector
// does not scan: a chunk is a []uint64 (a type without pointers), whose
// end holds the strings' bytes, copied from the answer, and whose start
// their headers (a pointer to the bytes and the length, string's
// layout), which the interfaces point to. A chunk of a whole block of
// rows is one allocation, and it adds nothing for the collector to scan
// (the headers' pointers are hidden from it), where a string header of
// its own (16 bytes) each would add a pointer each, which every cycle
// that finds the rows alive must follow.
//
// It is safe because a hidden pointer points into its own chunk: the
// collector keeps a chunk whole while anything points anywhere inside it
// (an interface to one of its headers, or a string copied out of one,
// whose pointer is a real one), so a header is only ever read, through
// an interface, while the chunk holding its bytes is alive, and Go's heap
// does not move. A chunk escapes to the heap (it is reachable from the
// Result decode returns). Each header and its bytes are written once,
// before the interface to them is made, by the goroutine that makes it,
// and never again (as unsafe.String asks: the bytes of a string are not
// changed while it exists); the Result reaches other goroutines only
// once decode returns, so no read races with the writes.
// TestStringsOutliveTheAnswer checks the strings after the collector has
// run and the answer's memory is written over.
type strArena struct {
	chunk []uint64
	// head is the words of chunk's start that headers use, tail the
	// bytes of its end that the strings' bytes use.
	head, tail int
	// used is the bytes (headers and strings) the strings boxed so far
	// took; rows is the rows left in decode's current block of rows
	// (this one included) and perRow what decode expects one to take: a
	// new chunk holds them (or the string that needs it, if larger).
	used, rows, perRow int
}

// box is v as an interface whose string is a copy of v in a.'s chunk.
func (a *strArena) box(v string) any {
	if v == "" {
		return v // boxed without allocating
	}
	n := len(v)
	if len(a.chunk)*8-a.head*8-a.tail < 16+n {
		a.grow(16 + n)
	}
	base := unsafe.Pointer(unsafe.SliceData(a.chunk))
	a.tail += n
	a.used += 16 + n
	data := unsafe.Add(base, len(a.chunk)*8-a.tail)
	copy(unsafe.Slice((*byte)(data), n), v)
	h := a.chunk[a.head : a.head+2 : a.head+2]
	h[0], h[1] = uint64(uintptr(data)), uint64(n)
	a.head += 2
	return boxed(stringType, &h[0])
}

// grow sets a new chunk, of at least need bytes, for the rest of the
// block of rows.
func (a *strArena) grow(need int) {
	size := max(need, a.rows*a.perRow)
	a.chunk, a.head, a.tail = make([]uint64, (size+7)/8), 0, 0
}

// eface is the layout of an interface value without methods (any).
type eface struct {
	typ, data unsafe.Pointer
}

var (
	stringType  = typeOf("")
	int64Type   = typeOf(int64(0))
	float64Type = typeOf(float64(0))
	timeType    = typeOf(time.Time{})
)

func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

// box puts v into the next free element of *block (a new block of size
// elements when it is full) and returns it as an interface of type typ,
// which is T's.
func box[T any](block *[]T, size int, typ unsafe.Pointer, v T) any {
	if len(*block) == 0 {
		*block = make([]T, max(size, 1))
	}
	p := &(*block)[0]
	*p, *block = v, (*block)[1:]
	return boxed(typ, p)
}

func (bx *boxes) str(v string) any { return bx.strs.box(v) }

func (bx *boxes) int(v int64) any {
	if v >= 0 && v < 256 {
		return v // Go boxes these without allocating
	}
	return box(&bx.ints, bx.size, int64Type, v)
}

func (bx *boxes) float(v float64) any { return box(&bx.flts, bx.size, float64Type, v) }

func (bx *boxes) time(v time.Time) any { return box(&bx.times, bx.size, timeType, v) }

func (r *reader) next(n int) ([]byte, error) {
	if n < 0 || len(r.b)-r.off < n {
		return nil, errShort
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p, nil
}

func (r *reader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		return 0, errShort
	}
	r.off += n
	return v, nil
}

func (r *reader) byte() (byte, error) {
	p, err := r.next(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

func (r *reader) string() (string, error) {
	n, err := r.uvarint()
	if err != nil {
		return "", err
	}
	if n > uint64(len(r.b)-r.off) {
		return "", errShort
	}
	v := r.s[r.off : r.off+int(n)]
	r.off += int(n)
	return v, nil
}

// decoder reads one value of a column's type.
type decoder func(r *reader) (any, error)

// decode reads a RowBinaryWithNamesAndTypes answer into a Result: at most
// b.MaxRows rows (all when 0), failing once they weigh more than
// b.MaxBytes (when set), as driver.RowBytes weighs them. hint is how many
// rows the engine says the answer holds (0 when it does not say), which
// sizes what decode allocates, no more (it is trusted up to the rows
// the answer's length can hold). Nothing of what it answers points into
// out, which the caller may free once it returns (read decodes chDB's
// own buffer, without copying it to Go first).
func decode(out string, b driver.Bounds, hint int) (*driver.Result, error) {
	res := &driver.Result{Columns: []string{}, Types: []string{}, Rows: [][]any{}}
	if len(out) == 0 {
		return res, nil
	}
	r := &reader{s: out, b: unsafe.Slice(unsafe.StringData(out), len(out))}
	n, err := r.uvarint()
	if err != nil || n > uint64(len(out)) {
		return nil, fmt.Errorf("chdb: reading the answer's columns: %w", errShort)
	}
	res.Columns = make([]string, n)
	res.Types = make([]string, n)
	for _, list := range [][]string{res.Columns, res.Types} {
		for i := range list {
			if list[i], err = r.string(); err != nil {
				return nil, fmt.Errorf("chdb: reading the answer's columns: %w", err)
			}
			list[i] = strings.Clone(list[i])
		}
	}
	decs := make([]decoder, n)
	kinds := make([]kind, n)
	for i, typ := range res.Types {
		if decs[i], err = decoderOf(typ); err != nil {
			return nil, fmt.Errorf("chdb: column %s: %w", res.Columns[i], err)
		}
		kinds[i] = kindOf(typ)
	}
	if n == 0 {
		// A row of no columns takes no bytes: there is nothing to read.
		return res, nil
	}
	// The rows' values are cut from blocks of rows, one allocation a
	// block, not one a row; the first is as large as the rows the engine
	// says it answered (hint), when it says, each other as large as the
	// rest of the answer holds rows of the size of those read so far (of
	// the smallest a row can be at first), so that the last one ends
	// about where the rows do; none is larger than maxBlock rows (one
	// block for all 10,000 rows of BenchmarkChDBRun/group10k made it
	// slower). Integers are boxed from blocks of their own, sized for the
	// columns of their kind, strings from r.strs, whose chunks are sized
	// for the block's rows, by the bytes the strings of the rows read so
	// far took a row (by the rows' bytes in the answer at first).
	const firstBlock, maxBlock = 16, 1024
	smallest := max(1, minRow(res.Types))
	var strCols, intCols int
	for _, k := range kinds {
		switch k {
		case kindString:
			strCols++
		case kindInt64, kindUInt64:
			intCols++
		}
	}
	// The reading of the most frequent types is written out here, with
	// the answer and the offset in locals, not in r, which the other
	// types' decoders are given (r.off is set for them).
	var (
		data  = r.b
		off   = r.off
		start = off
		block []any
		ints  []int64
		rows  int
		size  int64
	)
	hint = min(hint, len(data)/smallest+1)
	// answered is the rows of the whole answer, of which MaxRows may
	// read fewer.
	answered := hint
	if b.MaxRows > 0 {
		hint = min(hint, b.MaxRows)
	}
	res.Rows = make([][]any, 0, max(hint, 0))
	for off < len(data) && (b.MaxRows <= 0 || rows < b.MaxRows) {
		if len(block) == 0 {
			left := len(data) - off
			next := min(left/smallest+1, firstBlock)
			// perRow is the bytes of r.strs a row is expected to take:
			// those of the rows read so far, or at first 16 a string
			// column and the bytes a row of the answer has more than the
			// smallest (those of its strings, when they are its only
			// values of varying size).
			perRow := 16*strCols + min(left/next, 64) - smallest
			switch {
			case rows == 0 && hint > 0:
				next = min(hint, maxBlock)
				perRow = 16*strCols + left/answered - smallest
			case rows > 0:
				// The rows left at the mean size of those read, rounded up.
				mean := float64(off-start) / float64(rows)
				next = min(int(math.Ceil(float64(left)/mean)), left/smallest+1, maxBlock)
				perRow = (r.strs.used + rows - 1) / rows
			}
			if b.MaxRows > 0 {
				next = min(next, b.MaxRows-rows)
			}
			next = max(next, 1)
			block = make([]any, next*int(n))
			r.size = next
			// The integers' block of the block before is full or
			// dropped; the next is allocated when a value needs one,
			// for the rows of this block left (small integers need
			// none). A chunk of strings is used until it is full.
			ints = nil
			r.strs.rows, r.strs.perRow = next, max(perRow, 0)
		}
		row := block[:n:n]
		block = block[n:]
		weight := int64(2 + n)
		rowStart := off
		for i, dec := range decs {
			switch kinds[i] {
			case kindString:
				var v string
				if off < len(data) && data[off] < 0x80 {
					// A length under 128: one byte.
					l := int(data[off])
					if l > len(data)-off-1 {
						return nil, fmt.Errorf("chdb: column %s: %w", res.Columns[i], errShort)
					}
					v, off = out[off+1:off+1+l], off+1+l
				} else {
					r.off = off
					if v, err = r.string(); err != nil {
						return nil, fmt.Errorf("chdb: column %s: %w", res.Columns[i], err)
					}
					off = r.off
				}
				row[i] = r.strs.box(v)
				weight += int64(len(v)) + 2
				continue
			case kindUInt64, kindInt64:
				if len(data)-off >= 8 {
					u := binary.LittleEndian.Uint64(data[off:])
					if kinds[i] == kindInt64 || u <= math.MaxInt64 {
						off += 8
						v := int64(u)
						if v >= 0 && v < int64(len(smallInts)) {
							row[i] = boxed(int64Type, &smallInts[v])
						} else {
							if len(ints) == cap(ints) {
								ints = make([]int64, 0, (len(block)/int(n)+1)*intCols)
							}
							ints = append(ints, v)
							row[i] = boxed(int64Type, &ints[len(ints)-1])
						}
						if b.MaxBytes > 0 {
							weight += decimalLen(v)
						}
						continue
					}
				}
			}
			r.off = off
			if row[i], err = dec(r); err != nil {
				return nil, fmt.Errorf("chdb: column %s: %w", res.Columns[i], err)
			}
			off = r.off
			if b.MaxBytes > 0 {
				// A row of one value weighs its value and 3 bytes.
				weight += driver.RowBytes(row[i:i+1]) - 3
			}
		}
		if b.MaxBytes > 0 {
			if size += weight; size > b.MaxBytes {
				return nil, fmt.Errorf("chdb: %w: more than %d bytes", driver.ErrResultTooLarge, b.MaxBytes)
			}
		}
		if off == rowStart {
			return nil, fmt.Errorf("chdb: %w", errEmptyRow)
		}
		res.Rows = append(res.Rows, row)
		rows++
		r.strs.rows--
	}
	return res, nil
}

// decimalLen is the length of v in decimal: what driver.RowBytes weighs
// an integer value.
func decimalLen(v int64) int64 {
	if v >= 0 && v < 10 {
		return 1
	}
	n := int64(1)
	if v < 0 {
		if v == math.MinInt64 {
			return 20
		}
		n, v = 2, -v
	}
	for ; v >= 10; v /= 10 {
		n++
	}
	return n
}

// smallInts are the integers 0 to 255, which decode boxes pointing
// here (as Go's conversion to any does, into a table of its own), never
// written after they are set.
var smallInts = func() (t [256]int64) {
	for i := range t {
		t[i] = int64(i)
	}
	return t
}()

// boxed is the interface value of type typ (T's) whose value is *p,
// which is never written again: what converting *p to any makes, without
// the copy Go's conversion allocates. *p is written before the interface
// is made, by the goroutine that makes it, and the interface reaches
// other goroutines only through the Result decode returns, so no reader
// of it races with the write.
func boxed[T any](typ unsafe.Pointer, p *T) any {
	var a any
	*(*eface)(unsafe.Pointer(&a)) = eface{typ: typ, data: unsafe.Pointer(p)}
	return a
}

// kind is a type decode reads without its decoder: the most frequent
// ones.
type kind uint8

const (
	kindOther kind = iota
	kindString
	kindInt64
	kindUInt64
)

func kindOf(typ string) kind {
	switch typ {
	case "String", "LowCardinality(String)":
		return kindString
	case "Int64":
		return kindInt64
	case "UInt64":
		return kindUInt64
	}
	return kindOther
}

// decoderOf returns the decoder of a ClickHouse type name, as the header
// of RowBinaryWithNamesAndTypes writes it. Values come back as the other
// executors answer them: integers as int64 (text past its range), floats
// and decimals as float64 (NULL for NaN and infinities, which JSON cannot
// hold), text, UUIDs, IP addresses and enums as string, Bool as bool,
// dates and date-times as time.Time in UTC (a Date is its day), NULL as
// nil, arrays and tuples as []any and maps as map[string]any.
func decoderOf(typ string) (decoder, error) {
	name, args := splitType(typ)
	switch name {
	case "Nullable":
		if len(args) != 1 {
			break
		}
		inner, err := decoderOf(args[0])
		if err != nil {
			return nil, err
		}
		return func(r *reader) (any, error) {
			null, err := r.byte()
			if err != nil || null != 0 {
				return nil, err
			}
			return inner(r)
		}, nil
	case "LowCardinality":
		if len(args) == 1 {
			return decoderOf(args[0])
		}
	case "SimpleAggregateFunction":
		if len(args) == 2 {
			return decoderOf(args[1])
		}
	case "Array":
		if len(args) != 1 {
			break
		}
		elem, err := decoderOf(args[0])
		if err != nil {
			return nil, err
		}
		return func(r *reader) (any, error) {
			n, err := r.uvarint()
			if err != nil || n > uint64(len(r.b)-r.off) {
				return nil, errShort
			}
			list := make([]any, n)
			for i := range list {
				if list[i], err = elem(r); err != nil {
					return nil, err
				}
			}
			return list, nil
		}, nil
	case "Tuple":
		elems := make([]decoder, len(args))
		for i, a := range args {
			var err error
			if elems[i], err = decoderOf(tupleElement(a)); err != nil {
				return nil, err
			}
		}
		return func(r *reader) (any, error) {
			list := make([]any, len(elems))
			for i, dec := range elems {
				var err error
				if list[i], err = dec(r); err != nil {
					return nil, err
				}
			}
			return list, nil
		}, nil
	case "Map":
		if len(args) != 2 {
			break
		}
		key, err := decoderOf(args[0])
		if err != nil {
			return nil, err
		}
		val, err := decoderOf(args[1])
		if err != nil {
			return nil, err
		}
		return func(r *reader) (any, error) {
			n, err := r.uvarint()
			if err != nil || n > uint64(len(r.b)-r.off) {
				return nil, errShort
			}
			m := make(map[string]any, n)
			for range n {
				k, err := key(r)
				if err != nil {
					return nil, err
				}
				v, err := val(r)
				if err != nil {
					return nil, err
				}
				m[mapKey(k)] = v
			}
			return m, nil
		}, nil
	case "Enum8", "Enum16":
		names, err := enumNames(args)
		if err != nil {
			return nil, fmt.Errorf("type %s: %w", typ, err)
		}
		size := 1
		if name == "Enum16" {
			size = 2
		}
		return func(r *reader) (any, error) {
			p, err := r.next(size)
			if err != nil {
				return nil, err
			}
			v := int64(int8(p[0]))
			if size == 2 {
				v = int64(int16(binary.LittleEndian.Uint16(p)))
			}
			if s, ok := names[v]; ok {
				return s, nil
			}
			return strconv.FormatInt(v, 10), nil
		}, nil
	case "FixedString":
		if len(args) != 1 {
			break
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 {
			break
		}
		return func(r *reader) (any, error) {
			if _, err := r.next(n); err != nil {
				return nil, err
			}
			return r.str(r.s[r.off-n : r.off]), nil
		}, nil
	case "JSON":
		// Its text: every query carries
		// output_format_binary_write_json_as_string (see limitsOf), which
		// writes a JSON value as a String.
		return scalarDecoder("String")
	case "Decimal", "Decimal32", "Decimal64", "Decimal128", "Decimal256":
		return decimalDecoder(name, args)
	case "DateTime64":
		if len(args) < 1 {
			break
		}
		prec, err := strconv.Atoi(args[0])
		if err != nil || prec < 0 || prec > 9 {
			break
		}
		scale := int64(math.Pow10(prec))
		return func(r *reader) (any, error) {
			p, err := r.next(8)
			if err != nil {
				return nil, err
			}
			v := int64(binary.LittleEndian.Uint64(p))
			sec, frac := v/scale, v%scale
			if frac < 0 {
				sec, frac = sec-1, frac+scale
			}
			return r.time(time.Unix(sec, frac*(1e9/scale)).UTC()), nil
		}, nil
	case "DateTime":
		return boxedTime(4, func(p []byte) time.Time { return time.Unix(int64(binary.LittleEndian.Uint32(p)), 0).UTC() }), nil
	}
	if args != nil {
		return nil, fmt.Errorf("type %s is not one the executor reads; cast it (toString)", typ)
	}
	return scalarDecoder(typ)
}

// scalarDecoder is the decoder of a type without arguments.
func scalarDecoder(typ string) (decoder, error) {
	le := binary.LittleEndian
	switch typ {
	case "Int8":
		return boxedInt(1, func(p []byte) int64 { return int64(int8(p[0])) }), nil
	case "Int16":
		return boxedInt(2, func(p []byte) int64 { return int64(int16(le.Uint16(p))) }), nil
	case "Int32":
		return boxedInt(4, func(p []byte) int64 { return int64(int32(le.Uint32(p))) }), nil
	case "Int64":
		return boxedInt(8, func(p []byte) int64 { return int64(le.Uint64(p)) }), nil
	case "IntervalNanosecond", "IntervalMicrosecond", "IntervalMillisecond", "IntervalSecond", "IntervalMinute",
		"IntervalHour", "IntervalDay", "IntervalWeek", "IntervalMonth", "IntervalQuarter", "IntervalYear":
		return boxedInt(8, func(p []byte) int64 { return int64(le.Uint64(p)) }), nil
	case "UInt8":
		return boxedInt(1, func(p []byte) int64 { return int64(p[0]) }), nil
	case "UInt16":
		return boxedInt(2, func(p []byte) int64 { return int64(le.Uint16(p)) }), nil
	case "UInt32":
		return boxedInt(4, func(p []byte) int64 { return int64(le.Uint32(p)) }), nil
	case "UInt64":
		return func(r *reader) (any, error) {
			p, err := r.next(8)
			if err != nil {
				return nil, err
			}
			if u := le.Uint64(p); u <= math.MaxInt64 {
				return r.int(int64(u)), nil
			}
			return strconv.FormatUint(le.Uint64(p), 10), nil
		}, nil
	case "Int128", "Int256", "UInt128", "UInt256":
		size := 16
		if strings.HasSuffix(typ, "256") {
			size = 32
		}
		signed := typ[0] == 'I'
		return fixed(size, func(p []byte) any {
			v := wide(p, signed)
			if v.IsInt64() {
				return v.Int64()
			}
			return v.String()
		}), nil
	case "Float32":
		// As the float's shortest text reads as a float64 (0.1, not
		// 0.10000000149011612), as the engine writes it.
		return func(r *reader) (any, error) {
			p, err := r.next(4)
			if err != nil {
				return nil, err
			}
			f := math.Float32frombits(le.Uint32(p))
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return nil, nil
			}
			var buf [32]byte
			v, _ := strconv.ParseFloat(string(strconv.AppendFloat(buf[:0], float64(f), 'g', -1, 32)), 64)
			return r.float(v), nil
		}, nil
	case "Float64":
		return func(r *reader) (any, error) {
			p, err := r.next(8)
			if err != nil {
				return nil, err
			}
			f := math.Float64frombits(le.Uint64(p))
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, nil
			}
			return r.float(f), nil
		}, nil
	case "Bool":
		return fixed(1, func(p []byte) any { return p[0] != 0 }), nil
	case "String":
		return func(r *reader) (any, error) {
			v, err := r.string()
			if err != nil {
				return nil, err
			}
			return r.str(v), nil
		}, nil
	case "Date":
		return boxedTime(2, func(p []byte) time.Time { return time.Unix(int64(le.Uint16(p))*86400, 0).UTC() }), nil
	case "Date32":
		return boxedTime(4, func(p []byte) time.Time { return time.Unix(int64(int32(le.Uint32(p)))*86400, 0).UTC() }), nil
	case "DateTime":
		return boxedTime(4, func(p []byte) time.Time { return time.Unix(int64(le.Uint32(p)), 0).UTC() }), nil
	case "UUID":
		// Two 64-bit halves, each little-endian, the high half first.
		return func(r *reader) (any, error) {
			p, err := r.next(16)
			if err != nil {
				return nil, err
			}
			var u [16]byte
			for i := range 8 {
				u[i], u[8+i] = p[7-i], p[15-i]
			}
			var text [36]byte
			hex.Encode(text[0:8], u[0:4])
			hex.Encode(text[9:13], u[4:6])
			hex.Encode(text[14:18], u[6:8])
			hex.Encode(text[19:23], u[8:10])
			hex.Encode(text[24:36], u[10:16])
			text[8], text[13], text[18], text[23] = '-', '-', '-', '-'
			return r.str(string(text[:])), nil
		}, nil
	case "IPv4":
		return fixed(4, func(p []byte) any {
			return netip.AddrFrom4([4]byte{p[3], p[2], p[1], p[0]}).String()
		}), nil
	case "IPv6":
		return fixed(16, func(p []byte) any { return netip.AddrFrom16([16]byte(p)).String() }), nil
	case "Nothing":
		// Only inside Nullable, whose every value is NULL.
		return func(r *reader) (any, error) { return nil, nil }, nil
	}
	return nil, fmt.Errorf("type %s is not one the executor reads; cast it (toString)", typ)
}

// boxedInt is the decoder of an integer of n bytes read by f.
func boxedInt(n int, f func([]byte) int64) decoder {
	return func(r *reader) (any, error) {
		p, err := r.next(n)
		if err != nil {
			return nil, err
		}
		return r.int(f(p)), nil
	}
}

// fixed is the decoder of a value of n bytes converted by f.
func fixed(n int, f func([]byte) any) decoder {
	return func(r *reader) (any, error) {
		p, err := r.next(n)
		if err != nil {
			return nil, err
		}
		return f(p), nil
	}
}

// boxedTime is the decoder of a date or date-time of n bytes read by f,
// boxed from r's blocks.
func boxedTime(n int, f func([]byte) time.Time) decoder {
	return func(r *reader) (any, error) {
		p, err := r.next(n)
		if err != nil {
			return nil, err
		}
		return r.time(f(p)), nil
	}
}

// wide reads a little-endian integer of 16 or 32 bytes, two's complement
// when signed.
func wide(p []byte, signed bool) *big.Int {
	be := make([]byte, len(p))
	for i := range p {
		be[len(p)-1-i] = p[i]
	}
	v := new(big.Int).SetBytes(be)
	if signed && p[len(p)-1]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(p))))
	}
	return v
}

// decimalDecoder reads a Decimal(P, S) (or DecimalN(S)) as a float64: an
// integer of 4, 8, 16 or 32 bytes by P, divided by 10^S.
func decimalDecoder(name string, args []string) (decoder, error) {
	var prec, scale int
	var err error
	switch {
	case name == "Decimal" && len(args) == 2:
		if prec, err = strconv.Atoi(args[0]); err == nil {
			scale, err = strconv.Atoi(args[1])
		}
	case name != "Decimal" && len(args) == 1:
		prec = map[string]int{"Decimal32": 9, "Decimal64": 18, "Decimal128": 38, "Decimal256": 76}[name]
		scale, err = strconv.Atoi(args[0])
	default:
		err = errors.New("arguments")
	}
	if err != nil || prec < 1 || prec > 76 || scale < 0 || scale > prec {
		return nil, fmt.Errorf("type %s(%s) is not one the executor reads", name, strings.Join(args, ", "))
	}
	size := 32
	switch {
	case prec <= 9:
		size = 4
	case prec <= 18:
		size = 8
	case prec <= 38:
		size = 16
	}
	return func(r *reader) (any, error) {
		p, err := r.next(size)
		if err != nil {
			return nil, err
		}
		// The integer's text with the exponent, read as a float64 (the
		// nearest to the decimal, as the engine's text reads).
		var buf [96]byte
		var text []byte
		switch size {
		case 4:
			text = strconv.AppendInt(buf[:0], int64(int32(binary.LittleEndian.Uint32(p))), 10)
		case 8:
			text = strconv.AppendInt(buf[:0], int64(binary.LittleEndian.Uint64(p)), 10)
		default:
			text = wide(p, true).Append(buf[:0], 10)
		}
		text = strconv.AppendInt(append(text, "e-"...), int64(scale), 10)
		f, _ := strconv.ParseFloat(string(text), 64)
		return r.float(f), nil
	}, nil
}

// mapKey is a map's key as text.
func mapKey(k any) string {
	switch k := k.(type) {
	case string:
		return k
	case time.Time:
		return k.Format(time.RFC3339Nano)
	case nil:
		return ""
	}
	return fmt.Sprint(k)
}

// tupleElement is the type of a tuple's element, without its name (a
// named tuple's elements are "name Type"; a type has no space before its
// arguments).
func tupleElement(s string) string {
	if i := strings.IndexAny(s, " ("); i > 0 && s[i] == ' ' {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// splitType splits a type name into its name and its arguments at the top
// level ("Map(String, Array(Int64))" is Map with String and
// Array(Int64)); args is nil for a type without parentheses.
func splitType(typ string) (name string, args []string) {
	typ = strings.TrimSpace(typ)
	open := strings.IndexByte(typ, '(')
	if open < 0 || !strings.HasSuffix(typ, ")") {
		return typ, nil
	}
	name, inner := typ[:open], typ[open+1:len(typ)-1]
	args = []string{}
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		switch {
		case quoted && c == '\\':
			i++
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			args = append(args, strings.TrimSpace(inner[start:i]))
			start = i + 1
		}
	}
	return name, append(args, strings.TrimSpace(inner[start:]))
}

// enumNames reads an enum's values ('name' = value, ...) by number.
func enumNames(args []string) (map[int64]string, error) {
	names := make(map[int64]string, len(args))
	for _, a := range args {
		eq := strings.LastIndexByte(a, '=')
		if eq < 0 {
			return nil, fmt.Errorf("enum value %q", a)
		}
		v, err := strconv.ParseInt(strings.TrimSpace(a[eq+1:]), 10, 64)
		quoted := strings.TrimSpace(a[:eq])
		if err != nil || len(quoted) < 2 || quoted[0] != '\'' || quoted[len(quoted)-1] != '\'' {
			return nil, fmt.Errorf("enum value %q", a)
		}
		names[v] = unescape(quoted[1 : len(quoted)-1])
	}
	return names, nil
}

// unescape reads the backslash escapes of a quoted name in a type.
func unescape(s string) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// minRow is the fewest bytes a row of columns of types takes: its
// fixed-size values' bytes and one for each other (a string's length, a
// Nullable's flag, an array's size).
func minRow(types []string) int {
	n := 0
	for _, t := range types {
		switch t {
		case "Int8", "UInt8", "Bool":
			n++
		case "Int16", "UInt16", "Date":
			n += 2
		case "Int32", "UInt32", "Float32", "Date32", "DateTime":
			n += 4
		case "Int64", "UInt64", "Float64":
			n += 8
		default:
			n++
		}
	}
	return n
}
