package geoapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
)

// CheckKeyInput is the input of CheckKey.
type CheckKeyInput struct {
	// APIKey overrides Options.APIKey; a key is required.
	APIKey string
}

// CheckKeyOutput is the result of CheckKey: the key passed the service's
// authentication.
type CheckKeyOutput struct {
	// StatusCode is the service's answer to the probe: 422 or 400 (the
	// request's content was refused after the key was accepted), 402 (the
	// key's account has no credits).
	StatusCode int
	Attempts   int
}

// CheckKey asks the prediction endpoint, the one endpoint every deployment
// of the service accepts keys on, whether it accepts the key, without
// spending a credit: the request carries no image (a form without a file
// part, and top_n=0), so there is nothing to predict or charge, and the
// service refuses its content with 422 or 400 once the key has passed,
// or with 401 when the key is refused. It returns the 401 as an
// *UnauthorizedError, and *CheckKeyOutput when the key was accepted.
//
// Use it where the model list or credit summary cannot judge the key (an
// endpoint that takes no API keys; see KeyNotAccepted). The public backend
// authenticates in a middleware before it validates the request, and
// counts a prediction against its rate limit only once the request is
// valid, so the probe costs neither credits nor rate.
func (c *Client) CheckKey(ctx context.Context, in *CheckKeyInput, optFns ...func(*Options)) (*CheckKeyOutput, error) {
	if in == nil {
		in = &CheckKeyInput{}
	}
	o, base, key, err := c.prepare(optFns, in.APIKey, true)
	if err != nil {
		return nil, err
	}
	resp, err := c.invoke(ctx, &o, base, &operation{
		name: opCheckKey, method: http.MethodPost, path: pathPredict,
		// Out of range under the contract's name and the backend's.
		query:  url.Values{"top_n": {"0"}, "top_k": {"0"}},
		apiKey: key,
		newBody: func(context.Context, int) (*uploadBody, error) {
			return emptyFormBody(), nil
		},
	})
	if err == nil {
		return &CheckKeyOutput{StatusCode: resp.status, Attempts: resp.attempts}, nil
	}
	var (
		api       *APIError
		noCredits *OutOfCreditsError
	)
	switch {
	case errors.As(err, &noCredits):
		return &CheckKeyOutput{StatusCode: noCredits.StatusCode, Attempts: Attempts(err)}, nil
	case errors.As(err, &api) && api.StatusCode >= 400 && api.StatusCode < 500 &&
		api.StatusCode != http.StatusUnauthorized && api.StatusCode != http.StatusForbidden &&
		api.StatusCode != http.StatusTooManyRequests && api.StatusCode != http.StatusNotFound:
		// The content was refused: the key had passed.
		return &CheckKeyOutput{StatusCode: api.StatusCode, Attempts: Attempts(err)}, nil
	}
	return nil, err
}

// emptyFormBody is a multipart/form-data body with no part at all.
func emptyFormBody() *uploadBody {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.Close() // writes the closing boundary into buf; cannot fail
	b := buf.Bytes()
	return &uploadBody{
		Reader:        bytes.NewReader(b),
		image:         &guardedReader{r: strings.NewReader(""), want: 0},
		source:        io.NopCloser(nil),
		contentLength: int64(len(b)),
		contentType:   mw.FormDataContentType(),
	}
}
