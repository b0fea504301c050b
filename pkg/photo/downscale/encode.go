package downscale

import (
	"context"
	"fmt"
	"image"
	"image/jpeg"
)

// jpegOutput collects an encoded JPEG up to limit bytes and counts the rest
// without keeping it: an attempt that turns out too large costs no memory
// beyond the limit, and its full size still guides the next attempt.
//
// Write fails once ctx is done, which stops the encoder: image/jpeg
// writes through a 4 KiB buffer, so ctx is checked per 4 KiB of output.
type jpegOutput struct {
	ctx   context.Context
	buf   []byte
	limit int64
	n     int64
}

func (o *jpegOutput) Write(p []byte) (int, error) {
	if err := o.ctx.Err(); err != nil {
		return 0, err
	}
	o.n += int64(len(p))
	if room := o.limit - int64(len(o.buf)); room > 0 {
		o.buf = append(o.buf, p[:min(int64(len(p)), room)]...)
	}
	return len(p), nil
}

func (o *jpegOutput) fits() bool { return o.n <= o.limit }

// encodeAt encodes img as a baseline JPEG at quality q into out, replacing
// what it held. image/jpeg writes SOI, DQT, SOF0, DHT, SOS and EOI only: no
// APPn segment, so no metadata of the original can survive.
func encodeAt(out *jpegOutput, img image.Image, q int) error {
	out.buf, out.n = out.buf[:0], 0
	if err := jpeg.Encode(out, img, &jpeg.Options{Quality: q}); err != nil {
		return fmt.Errorf("encode jpeg at quality %d: %w", q, err)
	}
	return nil
}

// encodeUnder tries qualities from high down to low in steps of qualityStep
// (always ending on low) and returns the first that fits. ok is false if
// none did; out then holds the size at quality low.
func encodeUnder(out *jpegOutput, img image.Image, high, low int) (q int, ok bool, err error) {
	for q = high; ; q = max(low, q-qualityStep) {
		if err := encodeAt(out, img, q); err != nil {
			return q, false, err
		}
		if out.fits() {
			return q, true, nil
		}
		if q == low {
			return q, false, nil
		}
	}
}
