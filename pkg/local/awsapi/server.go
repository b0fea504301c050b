package awsapi

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Server is one stand-in listening on 127.0.0.1.
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// shutdownTimeout bounds Close's wait for requests in progress: a long
// poll (ReceiveMessage waits up to 20 s) is cut short by its context.
const shutdownTimeout = 2 * time.Second

// Listen serves h on 127.0.0.1 at an ephemeral port until Close.
func Listen(h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("awsapi: listen: %w", err)
	}
	s := &Server{ln: ln, srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Endpoint is the server's base URL, the value of AWS_ENDPOINT_URL_<SERVICE>.
func (s *Server) Endpoint() string { return "http://" + s.ln.Addr().String() }

// Close stops the server, ending requests still in progress after
// shutdownTimeout.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("awsapi: close: %w", err)
	}
	return s.srv.Close()
}

// readBody reads a request's body, bounded by maxRequestBody, and
// uncompressed when the client compressed it (the SDK gzips
// PutMetricData's: Content-Encoding gzip).
func readBody(r *http.Request) ([]byte, error) {
	var body io.Reader = io.LimitReader(r.Body, maxRequestBody)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		defer zr.Close()
		body = io.LimitReader(zr, maxRequestBody)
	}
	return io.ReadAll(body)
}

// apiError is an error a service answers: its code (the error shape's
// name), message and HTTP status; Sender faults are 400s.
type apiError struct {
	Code    string
	Message string
	Status  int
	// QueryCode is the awsQuery-compatible code SQS also sends in the
	// x-amzn-query-error header (e.g. AWS.SimpleQueueService.NonExistentQueue).
	QueryCode string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func senderError(code, format string, args ...any) *apiError {
	return &apiError{Code: code, Message: fmt.Sprintf(format, args...), Status: http.StatusBadRequest}
}

// asAPIError turns any error of an operation into what the service
// answers: its own apiError, else an InternalFailure (a bug of the stand-in,
// which the client shows with the message).
func asAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return &apiError{Code: "InternalFailure", Message: err.Error(), Status: http.StatusInternalServerError}
}
