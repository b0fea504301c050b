package geoapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/google/uuid"
)

// Bounds of top_n accepted by the service.
const (
	MinTopN = 1
	MaxTopN = 15
)

// PredictInput is the input of Predict.
type PredictInput struct {
	// APIKey overrides Options.APIKey for this call.
	APIKey string
	// Image opens the image; required. It is opened once per attempt.
	Image ImageSource
	// Size is the image size in bytes when known (>0): checked against
	// Options.MaxImageBytes before any call and sent as an exact
	// Content-Length. When 0, the size is taken from the source if it can
	// tell (a file, a byte slice); otherwise the upload is counted while it
	// streams and aborted past the limit with ErrImageTooLarge.
	Size int64
	// Filename is the form filename; default "image" plus the extension of
	// the detected format.
	Filename string
	// ContentType overrides the file part's Content-Type, which is otherwise
	// the detected format's (image/jpeg, image/heic, ...). It is honoured
	// only when the service accepts it, an image/* type or
	// application/octet-stream: anything else (S3's binary/octet-stream, an
	// empty or malformed type) would be refused (the public backend answers
	// 400 INVALID_FILE_TYPE), so the detected type is sent instead.
	ContentType string
	// TopN is the number of results to ask for: 0 leaves it to the service
	// (5), otherwise 1 to 15.
	TopN int
	// ModelID names a model; "" (recommended) uses the default global model.
	ModelID string
}

// PredictOutput is the result of Predict.
type PredictOutput struct {
	MessageCode  string
	PredictionID uuid.UUID
	ModelID      string
	// CreditsConsumed is data.credits_consumed, a whole number from 0 to
	// MaxCreditsConsumed. When the service sent anything else (negative,
	// fractional, not a JSON number, absurdly large) the answer is still
	// a success, since the call was made and may have charged anything:
	// CreditsConsumed is then 0, CreditsInvalid says why the figure was
	// refused (CreditsNegative, ...), and CreditsReported holds it as
	// sent (at most 200 bytes, without the key). A caller counting credits
	// counts what it reserved for the call instead.
	CreditsConsumed int
	CreditsInvalid  string
	CreditsReported string
	Result          Result
	// Attempts is the number of HTTP attempts made.
	Attempts int
	// RoundTrip is the duration of the successful attempt.
	RoundTrip time.Duration
}

// Predict uploads an image to POST /v1/prediction/predict and returns the
// predicted locations. The key, image and top_n are checked before anything
// is sent.
func (c *Client) Predict(ctx context.Context, in *PredictInput, optFns ...func(*Options)) (*PredictOutput, error) {
	const opName = opPredict
	if in == nil {
		return nil, &InputError{Field: "PredictInput", Reason: "is nil", Err: ErrInvalidInput}
	}
	o, base, key, err := c.prepare(optFns, in.APIKey, true)
	if err != nil {
		return nil, err
	}
	if err := validatePredictInput(in, o.MaxImageBytes); err != nil {
		return nil, err
	}

	first, err := openImage(ctx, in.Image, in.Size)
	if err != nil {
		return nil, err
	}
	format, ok := imageformat.Detect(first.head)
	if !ok {
		first.Close()
		reason := reasonNotImage
		if len(first.head) == 0 {
			reason = reasonEmpty
		}
		return nil, &InputError{Field: "Image", Reason: reason, Err: ErrNotImage}
	}
	if first.size > o.MaxImageBytes {
		first.Close()
		return nil, tooLarge(first.size, o.MaxImageBytes)
	}
	filename := in.Filename
	if filename == "" {
		filename = "image" + format.Extension
	}
	contentType := partContentType(in.ContentType, format)

	query := url.Values{}
	if in.TopN != 0 {
		query.Set("top_n", strconv.Itoa(in.TopN))
	}
	if in.ModelID != "" {
		query.Set("model_id", in.ModelID)
	}
	op := &operation{
		name: opName, method: http.MethodPost, path: pathPredict,
		query: query, apiKey: key, requestedModel: in.ModelID,
		newBody: func(ctx context.Context, attempt int) (*uploadBody, error) {
			img := first
			if attempt > 1 {
				// Each retry re-reads the image from its source.
				reopened, err := openImage(ctx, in.Image, in.Size)
				if err != nil {
					return nil, err
				}
				img = reopened
			}
			body, err := newUploadBody(img.reader, img.closer, img.size, o.MaxImageBytes, filename, contentType)
			if err != nil {
				img.Close()
				return nil, fmt.Errorf("geoapi: %s: %w", opName, err)
			}
			return body, nil
		},
	}
	resp, err := c.invoke(ctx, &o, base, op)
	// The first opening is consumed by attempt 1, which closes it; closing
	// again is harmless and covers an early return inside invoke.
	first.Close()
	if err != nil {
		return nil, err
	}
	out, err := decodePredictBody(resp.body)
	if err != nil {
		// A proxy may echo the request headers into the body, and the
		// decoder may quote the body: neither may carry the key onwards.
		return nil, &DecodeError{Operation: opName, StatusCode: resp.status,
			Body: redact(string(resp.body), key), CreditsConsumed: chargedCredits(resp.body),
			Err: redactErr(err, key)}
	}
	out.Attempts = resp.attempts
	out.RoundTrip = resp.roundTrip
	if out.CreditsInvalid != "" {
		out.CreditsReported = figureExcerpt([]byte(out.CreditsReported), key)
		o.Logger.Warn("geoapi: paid answer's credit figure refused", "field", "data.credits_consumed",
			"value", out.CreditsReported, "reason", out.CreditsInvalid, "prediction_id", out.PredictionID.String())
	}
	o.Logger.Debug("geoapi prediction", "prediction_id", out.PredictionID.String(), "model_id", out.ModelID,
		"credits_consumed", out.CreditsConsumed, "result_type", out.Result.Type,
		"attempts", out.Attempts, "round_trip", out.RoundTrip)
	return out, nil
}

// validatePredictInput checks what can be checked of in before the image is
// opened, as the SDK's generated validators do for an operation's input:
// top_n's range, the announced size against maxImageBytes, and an image
// source. The key is checked by prepare.
func validatePredictInput(in *PredictInput, maxImageBytes int64) error {
	if in.TopN != 0 && (in.TopN < MinTopN || in.TopN > MaxTopN) {
		return &InputError{Field: "TopN", Err: ErrInvalidTopN, TopN: in.TopN,
			Reason: fmt.Sprintf("%d is outside %d to %d", in.TopN, MinTopN, MaxTopN)}
	}
	if in.Size < 0 {
		return &InputError{Field: "Size", Reason: "is negative", Err: ErrInvalidInput}
	}
	if in.Size > maxImageBytes {
		return tooLarge(in.Size, maxImageBytes)
	}
	if in.Image == nil {
		return &InputError{Field: "Image", Reason: reasonNoSource, Err: ErrNotImage}
	}
	return nil
}

// octetStream is the type the service accepts for any file.
const octetStream = "application/octet-stream"

// partContentType is the file part's type: the caller's when the service
// accepts it, else the detected format's, else application/octet-stream.
func partContentType(given string, format imageformat.Format) string {
	if mt, _, err := mime.ParseMediaType(given); err == nil && (strings.HasPrefix(mt, "image/") || mt == octetStream) {
		return mt
	}
	if strings.HasPrefix(format.MIME, "image/") {
		return format.MIME
	}
	return octetStream
}

func tooLarge(n, limit int64) error {
	return &InputError{Field: "Image", Err: ErrImageTooLarge, Size: n, Limit: limit,
		Reason: fmt.Sprintf("%d bytes is more than the %d byte limit", n, limit)}
}

// openedImage is an opened image source with its first bytes peeked.
type openedImage struct {
	reader io.Reader
	closer io.Closer
	head   []byte // up to imageformat.SniffBytes, still unread in reader
	size   int64  // -1 when unknown
	closed bool
}

func (im *openedImage) Close() {
	if !im.closed {
		im.closed = true
		im.closer.Close()
	}
}

// openImage opens src and peeks its first bytes without reading the image
// into memory. size is the caller's announced size, 0 when unknown.
func openImage(ctx context.Context, src ImageSource, size int64) (*openedImage, error) {
	rc, err := src(ctx)
	if err != nil {
		return nil, fmt.Errorf("geoapi: Predict: open image: %w", err)
	}
	if rc == nil {
		return nil, &InputError{Field: "Image", Reason: reasonNoReader, Err: ErrNotImage}
	}
	if size == 0 {
		size = sizeOf(rc)
	}
	br := bufio.NewReaderSize(rc, imageformat.SniffBytes)
	head, err := br.Peek(imageformat.SniffBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		rc.Close()
		return nil, fmt.Errorf("geoapi: Predict: read image: %w", err)
	}
	return &openedImage{reader: br, closer: rc, head: head, size: size}, nil
}

// validateKey checks a key's shape without ever echoing it.
func validateKey(key string, required bool) error {
	if key == "" {
		if !required {
			return nil
		}
		return &InputError{Field: "APIKey", Reason: reasonKeyMissing, Err: ErrInvalidKey}
	}
	if len(key) <= len("geo_") || key[:4] != "geo_" {
		return &InputError{Field: "APIKey", Reason: reasonKeyPrefix, Err: ErrInvalidKey}
	}
	for i := 0; i < len(key); i++ {
		if key[i] <= ' ' || key[i] >= 0x7f {
			return &InputError{Field: "APIKey", Reason: reasonKeyCharacters, Err: ErrInvalidKey}
		}
	}
	return nil
}
