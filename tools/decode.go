package tools

import (
	"bytes"
	"encoding/json"
	"sync"
)

// DecodeNumbers decodes raw, one JSON value, into dst as a json.Decoder
// with UseNumber does (numbers kept exact), on a recycled decoder.
func DecodeNumbers(raw []byte, dst any) error {
	return numberDecoders.decode(raw, dst)
}

// decodeStrict decodes raw into dst as a json.Decoder with
// DisallowUnknownFields does, on a recycled decoder.
func decodeStrict(raw []byte, dst any) error {
	return strictDecoders.decode(raw, dst)
}

var (
	numberDecoders = decoders{setup: (*json.Decoder).UseNumber}
	strictDecoders = decoders{setup: (*json.Decoder).DisallowUnknownFields}
)

// decoders recycles json.Decoders set up one way: every call decodes its
// arguments twice (as plain values for the guard, into the handler's
// struct), and a new decoder, its reader and its buffer are three
// allocations each time.
type decoders struct {
	pool  sync.Pool
	setup func(*json.Decoder)
}

// reusedDecoder is a decoder over a reader that is given each input.
type reusedDecoder struct {
	r   bytes.Reader
	dec *json.Decoder
}

// maxRecycled is the longest input whose decoder is recycled: its buffer
// grows to the input's size.
const maxRecycled = 64 << 10

func (p *decoders) decode(raw []byte, dst any) error {
	d, _ := p.pool.Get().(*reusedDecoder)
	if d == nil {
		d = &reusedDecoder{}
		d.dec = json.NewDecoder(&d.r)
		p.setup(d.dec)
	}
	d.r.Reset(raw)
	start := d.dec.InputOffset()
	err := d.dec.Decode(dst)
	// A decoder that read raw to its end holds nothing of it: the next
	// input starts afresh. One that failed, or stopped before raw's end
	// (white space or more after the value), is dropped.
	if err == nil && d.dec.InputOffset()-start == int64(len(raw)) && len(raw) <= maxRecycled {
		p.pool.Put(d)
		return nil
	}
	if err != nil && start > 0 {
		// A recycled decoder counts a syntax error's offset from the
		// first input it read: the error is made again by a new one.
		return p.fresh(raw, dst)
	}
	return err
}

func (p *decoders) fresh(raw []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	p.setup(dec)
	return dec.Decode(dst)
}
