package geosim

import (
	"bufio"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// StatusClientClosedRequest is recorded when the client went away before a
// response could be delivered (nginx's 499; no status was sent).
const StatusClientClosedRequest = 499

// StatusDropped is recorded when a fault closed the connection without a
// response.
const StatusDropped = 0

// Call records one request. It never holds the key itself.
type Call struct {
	Time           time.Time
	Endpoint       string // PathPredict, PathModels or PathCredits
	KeyID          string // internal key id ("key-1"); "" without a valid key
	KeyName        string
	Org            string
	ModelRequested string // model_id query value; "" when omitted
	ModelRun       string // model that ran (predict success only)
	TopN           int    // top_n used (predict)
	BytesReceived  int64  // size of the uploaded file
	FileSHA256     string // hex
	File           []byte // the bytes received, with Config.KeepFiles only
	Status         int    // HTTP status sent; StatusDropped, StatusClientClosedRequest
	Charged        int    // credits charged by this call
	Fault          string // fault applied, "" for none
}

// Fault names recorded in Call.Fault.
const (
	FaultLatency            = "latency"
	FaultServerError        = "server_error"
	FaultDrop               = "drop"
	FaultDropAfterCharge    = "drop_after_charge"
	FaultGatewayAfterCharge = "gateway_error_after_charge"
	FaultMalformed          = "malformed"
	FaultStorm              = "rate_limit_storm"
)

func (s *Server) record(c *Call) {
	s.mu.Lock()
	s.calls = append(s.calls, *c)
	s.mu.Unlock()
	s.cfg.Logger.Info("call",
		slog.String("endpoint", c.Endpoint),
		slog.String("key_id", c.KeyID),
		slog.String("org", c.Org),
		slog.String("model_requested", c.ModelRequested),
		slog.String("model_run", c.ModelRun),
		slog.Int("top_n", c.TopN),
		slog.Int64("bytes", c.BytesReceived),
		slog.Int("status", c.Status),
		slog.Int("charged", c.Charged),
		slog.String("fault", c.Fault),
	)
}

// Calls returns a copy of every recorded call, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// CallCount is the number of recorded calls.
func (s *Server) CallCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// ResetCalls forgets the recorded calls.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
}

// callWriter records its call the moment the outcome starts to reach the
// client: the first header or body byte, or the hijack that drops the
// connection. A client that has seen a response, or a dropped connection,
// therefore always finds the call in Calls(). Handlers set the call's fields
// before they write, as the answer they describe is sent.
type callWriter struct {
	http.ResponseWriter
	s    *Server
	call *Call
	once sync.Once
}

// trackCall wraps w for call; the handler defers commit, which records a
// call that never wrote anything (the client went away).
func (s *Server) trackCall(w http.ResponseWriter, call *Call) *callWriter {
	return &callWriter{ResponseWriter: w, s: s, call: call}
}

func (w *callWriter) commit() { w.once.Do(func() { w.s.record(w.call) }) }

func (w *callWriter) WriteHeader(code int) {
	w.commit()
	w.ResponseWriter.WriteHeader(code)
}

func (w *callWriter) Write(b []byte) (int, error) {
	w.commit()
	return w.ResponseWriter.Write(b)
}

// Hijack lets dropConnection close the connection, after recording.
func (w *callWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.commit()
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	return hj.Hijack()
}
