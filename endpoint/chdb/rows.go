//go:build chdb

package chdb

/*
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>

typedef void * chdb_connection;
typedef struct chdb_result_ chdb_result;

chdb_result * chdb_stream_query_with_params_n(chdb_connection conn, const char * query, size_t query_len,
	const char * format, size_t format_len, const char * const * param_names, const size_t * param_name_lens,
	const char * const * param_values, const size_t * param_value_lens, size_t param_count);
chdb_result * chdb_stream_fetch_result(chdb_connection conn, chdb_result * result);
void chdb_stream_cancel_query(chdb_connection conn, chdb_result * result);
char * chdb_result_buffer(chdb_result * result);
size_t chdb_result_length(chdb_result * result);
const char * chdb_result_error(chdb_result * result);
uint64_t chdb_result_storage_rows_read(chdb_result * result);
uint64_t chdb_result_storage_bytes_read(chdb_result * result);
void chdb_destroy_query_result(chdb_result * result);
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

var _ driver.RowQuerier = (*Executor)(nil)

// QueryRows implements driver.RowQuerier: Query, with the answer read
// from chDB's stream (chdb_stream_query), a block of rows at a time, and
// each row handed to sink as it is decoded rather than kept: neither the
// engine's answer nor its rows are held whole, whatever their number
// (chDB answers a stream in blocks that are each a whole
// RowBinaryWithNamesAndTypes answer: the header, then whole rows). The
// row's slice is reused; its strings are copies the sink may keep. The
// bounds are Query's: b.MaxRows by the engine (max_result_rows, 'break')
// and by the executor, b.MaxBytes by the executor, weighing each row
// before it is handed over, b.Timeout by the engine and ctx, checked
// between blocks. A sink that stops the rows cancels the rest of the
// stream. The connection is held while the rows are written: the
// Executor's other statements wait for the sink (a streamed answer is
// bounded by its writer's timeout).
func (x *Executor) QueryRows(ctx context.Context, st driver.Statement, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
	if sink == nil {
		return nil, errors.New("chdb: QueryRows without a sink")
	}
	ctx, cancel := driver.BoundContext(ctx, b.Timeout)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("chdb: %w", err)
	}
	ps, err := paramsOf(st.Args())
	if err != nil {
		return nil, err
	}
	defer ps.free()
	pn, pnl, pv, pvl := ps.pointers()
	t := timeout(ctx)

	x.mu.Lock()
	defer x.mu.Unlock()
	if x.conn == nil {
		return nil, ErrClosed
	}
	query := x.withSettings(st.SQL(), t, b, x.kept)
	cq, cf := C.CString(query), C.CString(resultFormat)
	defer C.free(unsafe.Pointer(cq))
	defer C.free(unsafe.Pointer(cf))
	conn := C.chdb_connection(*x.conn)
	stream := C.chdb_stream_query_with_params_n(conn, cq, C.size_t(len(query)), cf, C.size_t(len(resultFormat)),
		pn, pnl, pv, pvl, C.size_t(len(ps.names)))
	if stream == nil {
		return nil, errors.New("chdb: the query returned no result")
	}
	defer C.chdb_destroy_query_result(stream)
	if msg := C.chdb_result_error(stream); msg != nil {
		x.drain()
		return nil, chunkError(C.GoString(msg))
	}
	d := &streamDecoder{sink: sink, b: b}
	for {
		if err := ctx.Err(); err != nil {
			x.stop(conn, stream)
			return nil, fmt.Errorf("chdb: %w", err)
		}
		chunk := C.chdb_stream_fetch_result(conn, stream)
		if chunk == nil {
			x.stop(conn, stream)
			return nil, errors.New("chdb: the stream returned no result")
		}
		if msg := C.chdb_result_error(chunk); msg != nil {
			text := C.GoString(msg)
			C.chdb_destroy_query_result(chunk)
			if strings.Contains(text, noStream) {
				// chDB ends the stream of an answer of no rows at its
				// start, before any block, its header included: the
				// statement runs again, answered whole (no rows), for
				// its columns.
				if !d.header {
					return x.queryWhole(query, ps, b, sink)
				}
				break
			}
			x.drain()
			return nil, chunkError(text)
		}
		d.rowsRead += int64(C.chdb_result_storage_rows_read(chunk))
		d.bytesRead += int64(C.chdb_result_storage_bytes_read(chunk))
		size := C.chdb_result_length(chunk)
		if size == 0 {
			C.chdb_destroy_query_result(chunk)
			break
		}
		err := d.feed(unsafe.String((*byte)(unsafe.Pointer(C.chdb_result_buffer(chunk))), int(size)))
		C.chdb_destroy_query_result(chunk)
		if err != nil {
			x.stop(conn, stream)
			return nil, err
		}
		if d.full {
			x.stop(conn, stream)
			break
		}
	}
	if !d.header {
		// An answer of no bytes: no columns.
		if err := sink.Columns([]string{}, []string{}); err != nil {
			return nil, err
		}
	}
	res := &driver.Result{Columns: d.cols, Types: d.types, RowsRead: &d.rowsRead, BytesRead: &d.bytesRead}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("chdb: %w", err)
	}
	return res, nil
}

// noStream is chDB's error of a fetch from a stream that ended at its
// start: an answer of no rows.
const noStream = "No active streaming query"

// queryWhole runs query (with its SETTINGS clause) as Query does and hands
// its rows to sink; x.mu is held. QueryRows runs it for an answer of no
// rows, whose stream gives no header.
func (x *Executor) queryWhole(query string, ps *params, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
	pn, pnl, pv, pvl := ps.pointers()
	var res *driver.Result
	err := x.query(query, resultFormat, pn, pnl, pv, pvl, len(ps.names), func(out string, st stats) error {
		var err error
		if res, err = decode(out, b, st.answered); err != nil {
			return err
		}
		res.RowsRead, res.BytesRead = &st.rows, &st.bytes
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := sink.Columns(res.Columns, res.Types); err != nil {
		return nil, err
	}
	for _, row := range res.Rows {
		if err := sink.Row(row); err != nil {
			return nil, err
		}
	}
	res.Rows = nil
	return res, nil
}

// stop cancels the rest of a stream whose rows are no longer read; x.mu
// is held. What the engine wrote of it is dropped (drain), so that no
// later statement reads it.
func (x *Executor) stop(conn C.chdb_connection, stream *C.chdb_result) {
	C.chdb_stream_cancel_query(conn, stream)
	x.drain()
}

// chunkError is the error of a stream's failed statement, as query's.
func chunkError(text string) error {
	if strings.Contains(text, "TIMEOUT_EXCEEDED") || strings.Contains(text, "Timeout exceeded") {
		return fmt.Errorf("chdb: %s: %w", text, context.DeadlineExceeded)
	}
	return queryError(text)
}

// streamDecoder decodes a RowBinaryWithNamesAndTypes answer that comes in
// blocks (QueryRows), each a whole answer of its own (the header, then
// whole rows), and hands each row to sink as it is read; nothing of a
// block is kept past it.
type streamDecoder struct {
	sink        driver.RowSink
	b           driver.Bounds
	header      bool // the columns were read and given to sink
	cols, types []string
	decs        []decoder
	row         []any
	r           reader
	rows        int
	size        int64
	full        bool // b.MaxRows rows were handed over
	rowsRead    int64
	bytesRead   int64
}

// feed decodes the rows of one block, chunk, which is the caller's once
// feed returns (nothing handed over points into it).
func (d *streamDecoder) feed(chunk string) error {
	r := &d.r
	r.s, r.b, r.off = chunk, unsafe.Slice(unsafe.StringData(chunk), len(chunk)), 0
	// Values are boxed from blocks of 256 rows, strings copied into
	// chunks sized for them (see boxes).
	r.size, r.strs.rows, r.strs.perRow = 256, 256, 32
	if err := d.readHeader(); err != nil {
		return err
	}
	if len(d.cols) == 0 {
		// A row of no columns takes no bytes: there is nothing to read.
		return nil
	}
	for r.off < len(chunk) {
		if d.b.MaxRows > 0 && d.rows >= d.b.MaxRows {
			d.full = true
			return nil
		}
		start := r.off
		for i, dec := range d.decs {
			v, err := dec(r)
			if err != nil {
				return fmt.Errorf("chdb: column %s: %w", d.cols[i], err)
			}
			d.row[i] = v
		}
		if r.off == start {
			return fmt.Errorf("chdb: %w", errEmptyRow)
		}
		if d.b.MaxBytes > 0 {
			if d.size += driver.RowBytes(d.row); d.size > d.b.MaxBytes {
				return fmt.Errorf("chdb: %w: more than %d bytes", driver.ErrResultTooLarge, d.b.MaxBytes)
			}
		}
		d.rows++
		if err := d.sink.Row(d.row); err != nil {
			return err
		}
	}
	if d.b.MaxRows > 0 && d.rows >= d.b.MaxRows {
		d.full = true
	}
	return nil
}

// readHeader reads a block's columns' names and types: the first block's
// are given to sink, each later block's must be the same.
func (d *streamDecoder) readHeader() error {
	r := &d.r
	n, err := r.uvarint()
	if err != nil || n > uint64(len(r.b)) {
		return fmt.Errorf("chdb: reading the answer's columns: %w", errShort)
	}
	if d.header {
		if int(n) != len(d.cols) {
			return fmt.Errorf("chdb: a block of the answer has %d columns, the first had %d", n, len(d.cols))
		}
		for _, list := range [][]string{d.cols, d.types} {
			for i := range list {
				s, err := r.string()
				if err != nil {
					return fmt.Errorf("chdb: reading the answer's columns: %w", err)
				}
				if s != list[i] {
					return fmt.Errorf("chdb: a block of the answer has column %q where the first had %q", s, list[i])
				}
			}
		}
		return nil
	}
	cols, types := make([]string, n), make([]string, n)
	for _, list := range [][]string{cols, types} {
		for i := range list {
			s, err := r.string()
			if err != nil {
				return fmt.Errorf("chdb: reading the answer's columns: %w", err)
			}
			list[i] = strings.Clone(s)
		}
	}
	d.decs = make([]decoder, n)
	for i, typ := range types {
		if d.decs[i], err = decoderOf(typ); err != nil {
			return fmt.Errorf("chdb: column %s: %w", cols[i], err)
		}
	}
	d.cols, d.types, d.row, d.header = cols, types, make([]any, n), true
	return d.sink.Columns(cols, types)
}
