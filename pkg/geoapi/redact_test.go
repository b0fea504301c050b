package geoapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// echoHeaders answers 200 with a body that repeats the request headers, as a
// misconfigured proxy might, wrapped as the test case says.
func echoHeaders(wrap func(key string) string) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, r *http.Request) {
		writeBody(w, http.StatusOK, wrap(r.Header.Get(KeyHeader)))
	}
}

func TestKeyNeverInUndecodableSuccess(t *testing.T) {
	notJSON := func(key string) string {
		return "proxy echo\n" + KeyHeader + ": " + key + "\nAccept: application/json\n<html>ok</html>"
	}
	tests := []struct {
		name string
		body func(key string) string
		call func(c *Client) error
	}{
		{"Predict, not JSON", notJSON, func(c *Client) error {
			_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(64))})
			return err
		}},
		{"Predict, the key where the decoder quotes it", func(key string) string {
			return `{"message_code":"success","data":{"prediction":{"result_type":"coordinates","clusters":[]},"prediction_id":"` +
				key + `","credits_consumed":1}}`
		}, func(c *Client) error {
			_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(64))})
			return err
		}},
		{"Models, not JSON", notJSON, func(c *Client) error {
			_, err := c.Models(context.Background(), nil)
			return err
		}},
		{"Models, the key as a field name", func(key string) string { return `{"` + key + `":1}` }, func(c *Client) error {
			_, err := c.Models(context.Background(), nil)
			return err
		}},
		{"Credits, not JSON", notJSON, func(c *Client) error {
			_, err := c.Credits(context.Background(), nil)
			return err
		}},
		{"Credits, the key as a field name", func(key string) string { return `{"echo":{"` + key + `":{"n":1}}}` }, func(c *Client) error {
			_, err := c.Credits(context.Background(), nil)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, echoHeaders(tt.body))
			c, _ := rec.client(t)
			err := tt.call(c)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			if rec.requests()[0].Key != testKey {
				t.Fatal("the key was not sent, so the test proves nothing")
			}
			texts := []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)}
			var de *DecodeError
			var le *LayoutError
			switch {
			case errors.As(err, &de):
				texts = append(texts, de.Body, de.Err.Error())
				if !strings.Contains(de.Body+de.Err.Error(), redactedMark) {
					t.Errorf("body %q: should show where the key was removed", de.Body)
				}
			case errors.As(err, &le):
				texts = append(texts, le.Missing, strings.Join(le.Keys, " "))
			default:
				t.Fatalf("err = %#v, want *DecodeError or *LayoutError", err)
			}
			for _, s := range texts {
				if strings.Contains(s, testKey) {
					t.Errorf("key leaked into %q", s)
				}
			}
		})
	}
}
