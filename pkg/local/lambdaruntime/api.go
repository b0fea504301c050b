package lambdaruntime

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Runtime API routes and headers (2018-06-01), as aws-lambda-go uses them.
const (
	apiPrefix = "/2018-06-01/runtime/"

	headerRequestID    = "Lambda-Runtime-Aws-Request-Id"
	headerDeadlineMS   = "Lambda-Runtime-Deadline-Ms"
	headerFunctionARN  = "Lambda-Runtime-Invoked-Function-Arn"
	headerTraceID      = "Lambda-Runtime-Trace-Id"
	headerErrorType    = "Lambda-Runtime-Function-Error-Type" // header or trailer
	trailerErrorBody   = "Lambda-Runtime-Function-Error-Body" // base64 JSON error document
	accountID          = "000000000000"
	defaultARNRegion   = "us-east-1"
	errorDocumentLimit = 1 << 20
)

// errorDocument is the JSON error a runtime posts and the API answers with.
type errorDocument struct {
	Message string `json:"errorMessage"`
	Type    string `json:"errorType"`
}

func (e *environment) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	path, ok := strings.CutPrefix(req.URL.Path, apiPrefix)
	if !ok {
		apiError(w, http.StatusNotFound, "NotFound", "unknown path "+req.URL.Path)
		return
	}
	switch {
	case path == "invocation/next":
		if !allow(w, req, http.MethodGet) {
			return
		}
		e.next(w, req)
	case path == "init/error":
		if !allow(w, req, http.MethodPost) {
			return
		}
		e.postInitError(w, req)
	case strings.HasPrefix(path, "invocation/"):
		id, action, _ := strings.Cut(strings.TrimPrefix(path, "invocation/"), "/")
		if id == "" || (action != "response" && action != "error") {
			apiError(w, http.StatusNotFound, "NotFound", "unknown path "+req.URL.Path)
			return
		}
		if !allow(w, req, http.MethodPost) {
			return
		}
		e.post(w, req, id, action == "error")
	default:
		apiError(w, http.StatusNotFound, "NotFound", "unknown path "+req.URL.Path)
	}
}

func allow(w http.ResponseWriter, req *http.Request, method string) bool {
	if req.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	apiError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", req.Method+" is not allowed on "+req.URL.Path)
	return false
}

func apiError(w http.ResponseWriter, code int, errType, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(errorDocument{Message: msg, Type: errType})
}

// next is GET invocation/next: the end of init on the first call, the end of
// the current invocation on later ones; it blocks until the next event.
func (e *environment) next(w http.ResponseWriter, req *http.Request) {
	e.readyOnce.Do(func() { close(e.ready) })

	// Asking for the next event without answering the current one ends it.
	rt := e.rt
	rt.mu.Lock()
	inv := e.inv
	abandoned := inv != nil && inv.handedOut && !inv.finished
	if abandoned {
		inv.finished = true
	}
	rt.mu.Unlock()
	if abandoned {
		e.freeze()
		inv.done <- outcome{status: FunctionError, errType: "Runtime.InvalidStateTransition",
			errMsg: "the runtime asked for the next event without answering invocation " + inv.id, at: time.Now()}
	}

	select {
	case inv := <-e.events:
		rt.mu.Lock()
		inv.handedOut = true
		rt.mu.Unlock()
		region := rt.cfg.Region
		if region == "" {
			region = defaultARNRegion
		}
		h := w.Header()
		h.Set(headerRequestID, inv.id)
		h.Set(headerDeadlineMS, strconv.FormatInt(inv.deadline.UnixMilli(), 10))
		h.Set(headerFunctionARN, "arn:aws:lambda:"+region+":"+accountID+":function:"+rt.cfg.FunctionName)
		h.Set(headerTraceID, traceID(inv.start))
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(inv.payload)
	case <-req.Context().Done():
	case <-e.gone:
		apiError(w, http.StatusGone, "EnvironmentGone", "this execution environment was shut down")
	}
}

// post is POST invocation/{id}/response or .../error.
func (e *environment) post(w http.ResponseWriter, req *http.Request, id string, isError bool) {
	limit := int64(MaxPayloadSize)
	if isError {
		limit = errorDocumentLimit
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	if err != nil {
		return // the connection died, e.g. with its process
	}
	tooLarge := int64(len(body)) > limit
	if tooLarge {
		// Drain what is left so the client sees the answer, within reason.
		_, _ = io.CopyN(io.Discard, req.Body, 64<<20)
	}
	now := time.Now()

	rt := e.rt
	rt.mu.Lock()
	inv := e.inv
	switch {
	case inv == nil || inv.id != id || !inv.handedOut:
		rt.mu.Unlock()
		apiError(w, http.StatusBadRequest, "InvalidRequestID", "no invocation "+id+" is in progress")
		return
	case inv.finished:
		rt.mu.Unlock()
		if now.After(inv.deadline) {
			apiError(w, http.StatusGone, "InvocationTimedOut", "invocation "+id+" timed out; the answer does not count")
			return
		}
		apiError(w, http.StatusBadRequest, "InvalidStateTransition", "invocation "+id+" was already answered")
		return
	case now.After(inv.deadline):
		// The deadline timer decides this invocation (Timeout) and kills
		// the process; an answer completed after it never counts.
		rt.mu.Unlock()
		apiError(w, http.StatusGone, "InvocationTimedOut", "invocation "+id+" is past its deadline; the answer does not count")
		return
	}
	inv.finished = true
	rt.mu.Unlock()

	o := outcome{at: now}
	code := http.StatusAccepted
	switch {
	case tooLarge && !isError:
		o.status, o.errType = FunctionError, "Function.ResponseSizeTooLarge"
		o.errMsg = "Response payload size exceeded maximum allowed payload size (6291556 bytes)."
		code = http.StatusRequestEntityTooLarge
	case isError:
		o.status = FunctionError
		o.errType, o.errMsg = parseErrorDocument(body, req.Header.Get(headerErrorType))
	case req.Trailer.Get(headerErrorType) != "":
		// aws-lambda-go reports a response reader's failure in trailers.
		o.status = FunctionError
		doc, _ := base64.StdEncoding.DecodeString(req.Trailer.Get(trailerErrorBody))
		o.errType, o.errMsg = parseErrorDocument(doc, req.Trailer.Get(headerErrorType))
	default:
		o.status, o.payload = Succeeded, body
	}
	// Frozen before it even learns the answer was accepted: nothing the
	// function does after answering progresses until the next invocation.
	e.freeze()
	inv.done <- o
	if code == http.StatusAccepted {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"status":"OK"}`+"\n")
		return
	}
	apiError(w, code, "RequestEntityTooLarge", o.errMsg)
}

func parseErrorDocument(body []byte, headerType string) (errType, msg string) {
	var doc errorDocument
	if json.Unmarshal(body, &doc) == nil {
		errType, msg = doc.Type, doc.Message
	} else {
		msg = string(body)
	}
	if errType == "" {
		errType = headerType
	}
	if errType == "" {
		errType = "Unhandled"
	}
	return errType, msg
}

// postInitError is POST init/error, valid only during init.
func (e *environment) postInitError(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, errorDocumentLimit))
	if err != nil {
		return
	}
	select {
	case <-e.ready:
		apiError(w, http.StatusForbidden, "InvalidStateTransition", "init/error after init completed")
		return
	default:
	}
	o := outcome{status: InitFailed, at: time.Now()}
	o.errType, o.errMsg = parseErrorDocument(body, req.Header.Get(headerErrorType))
	select {
	case e.initErr <- o:
	default: // only the first counts
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, `{"status":"OK"}`+"\n")
}

// traceID is an X-Ray trace header, not sampled.
func traceID(start time.Time) string {
	return "Root=1-" + strconv.FormatInt(start.Unix(), 16) + "-" + randomHex(24) +
		";Parent=" + randomHex(16) + ";Sampled=0"
}
