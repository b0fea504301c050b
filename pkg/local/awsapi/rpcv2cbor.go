package awsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/aws/smithy-go/encoding/cbor"
)

// cborOp is one operation of a Smithy RPC v2 CBOR service: it decodes its
// input (the CBOR request as JSON, see cborToJSON) and returns its output
// as a CBOR value (nil: an empty map).
type cborOp func(ctx context.Context, input []byte) (cbor.Value, error)

// rpcv2CBOR serves POST /service/<service>/operation/<Operation> with CBOR
// bodies, the protocol of the CloudWatch client go.mod pins.
type rpcv2CBOR struct {
	service string // e.g. GraniteServiceVersion20100801
	ops     map[string]cborOp
}

func (s rpcv2CBOR) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/service/"+s.service+"/operation/")
	op := s.ops[name]
	if r.Method != http.MethodPost || !ok || op == nil {
		s.fail(w, &apiError{Code: "UnknownOperationException", Message: fmt.Sprintf("%s %s is not served locally", r.Method, r.URL.Path), Status: http.StatusBadRequest})
		return
	}
	body, err := readBody(r)
	if err != nil {
		s.fail(w, senderError("SerializationException", "read body: %v", err))
		return
	}
	input := []byte("{}")
	if len(body) > 0 {
		v, err := cbor.Decode(body)
		if err != nil {
			s.fail(w, senderError("SerializationException", "decode CBOR: %v", err))
			return
		}
		if input, err = json.Marshal(cborToJSON(v)); err != nil {
			s.fail(w, senderError("SerializationException", "decode CBOR: %v", err))
			return
		}
	}
	out, err := op(r.Context(), input)
	if err != nil {
		s.fail(w, asAPIError(err))
		return
	}
	if out == nil {
		out = cbor.Map{}
	}
	s.write(w, http.StatusOK, out)
}

func (s rpcv2CBOR) write(w http.ResponseWriter, status int, v cbor.Value) {
	w.Header().Set("Content-Type", "application/cbor")
	w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
	w.WriteHeader(status)
	_, _ = w.Write(cbor.Encode(v))
}

func (s rpcv2CBOR) fail(w http.ResponseWriter, e *apiError) {
	s.write(w, e.Status, cbor.Map{"__type": cbor.String(e.Code), "message": cbor.String(e.Message)})
}

// cborToJSON turns a decoded CBOR value into what encoding/json marshals:
// maps, lists, strings, numbers (a timestamp, tag 1, becomes its epoch
// seconds, as awsJson writes timestamps), booleans and null.
func cborToJSON(v cbor.Value) any {
	switch v := v.(type) {
	case cbor.Map:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = cborToJSON(e)
		}
		return out
	case cbor.List:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cborToJSON(e)
		}
		return out
	case cbor.String:
		return string(v)
	case cbor.Uint:
		return uint64(v)
	case cbor.NegInt:
		return -1 - float64(v)
	case cbor.Float32:
		return float64(v)
	case cbor.Float64:
		return float64(v)
	case cbor.Bool:
		return bool(v)
	case cbor.Slice:
		return []byte(v)
	case *cbor.Tag:
		return cborToJSON(v.Value)
	case cbor.Tag:
		return cborToJSON(v.Value)
	}
	return nil // Nil, Undefined
}

// cborTime is a timestamp as RPC v2 CBOR encodes it: tag 1, epoch seconds.
func cborTime(t time.Time) cbor.Value {
	return &cbor.Tag{ID: 1, Value: cbor.Float64(float64(t.UnixNano()) / 1e9)}
}

// epochTime reads a timestamp decoded by cborToJSON (epoch seconds).
func epochTime(sec float64) time.Time {
	whole, frac := math.Modf(sec)
	return time.Unix(int64(whole), int64(frac*1e9)).UTC()
}

// cborStrings is a list of strings.
func cborStrings(ss []string) cbor.List {
	out := make(cbor.List, len(ss))
	for i, s := range ss {
		out[i] = cbor.String(s)
	}
	return out
}
