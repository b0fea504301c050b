package awsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// jsonOp is one operation of an awsJson service: it decodes its input
// from the request body and returns the output to encode (nil: {}).
type jsonOp func(ctx context.Context, r *http.Request, body []byte) (any, error)

// maxRequestBody bounds a request body: SQS's largest batch (10 messages
// of 1 MiB) fits with room.
const maxRequestBody = 16 << 20

// awsJSON serves an awsJson1_0 or awsJson1_1 service: POST / with
// X-Amz-Target "<target>.<Operation>".
type awsJSON struct {
	target  string // e.g. AmazonSQS
	version string // "1.0" or "1.1"
	ops     map[string]jsonOp
}

func (s awsJSON) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), s.target+".")
	handle := s.ops[op]
	if r.Method != http.MethodPost || !ok || handle == nil {
		s.fail(w, &apiError{Code: "UnknownOperationException", Message: fmt.Sprintf("operation %q is not served locally", r.Header.Get("X-Amz-Target")), Status: http.StatusBadRequest})
		return
	}
	body, err := readBody(r)
	if err != nil {
		s.fail(w, senderError("SerializationException", "read body: %v", err))
		return
	}
	out, err := handle(r.Context(), r, body)
	if err != nil {
		s.fail(w, asAPIError(err))
		return
	}
	if out == nil {
		out = struct{}{}
	}
	data, err := json.Marshal(out)
	if err != nil {
		s.fail(w, asAPIError(err))
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-"+s.version)
	_, _ = w.Write(data)
}

func (s awsJSON) fail(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/x-amz-json-"+s.version)
	w.Header().Set("X-Amzn-ErrorType", e.Code)
	if e.QueryCode != "" {
		fault := "Sender"
		if e.Status >= 500 {
			fault = "Receiver"
		}
		w.Header().Set("X-Amzn-Query-Error", e.QueryCode+";"+fault)
	}
	w.WriteHeader(e.Status)
	data, _ := json.Marshal(map[string]string{"__type": e.Code, "message": e.Message})
	_, _ = w.Write(data)
}

// decodeJSON decodes an operation's input, answering a SerializationException
// for a body that is not its shape.
func decodeJSON(body []byte, in any) error {
	if len(body) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, in); err != nil {
		return senderError("SerializationException", "decode input: %v", err)
	}
	return nil
}
