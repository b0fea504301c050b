package awsapi

import (
	"bytes"
	"context"
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"

	"github.com/google/uuid"
)

// queryOp is one operation of an awsQuery service: it reads its input
// from the form and returns its result, encoded as the "<Action>Result"
// element (nil: an empty one).
type queryOp func(ctx context.Context, form url.Values) (any, error)

// awsQuery serves an awsQuery service: POST / with a form body naming the
// Action, answered with XML in the service's namespace.
type awsQuery struct {
	namespace string // e.g. http://cloudformation.amazonaws.com/doc/2010-05-15/
	ops       map[string]queryOp
}

type queryErrorResponse struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	Xmlns   string   `xml:"xmlns,attr"`
	Error   struct {
		Type    string
		Code    string
		Message string
	}
	RequestID string `xml:"RequestId"`
}

func (s awsQuery) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxRequestBody)
	if err := r.ParseForm(); err != nil {
		s.fail(w, senderError("MalformedQueryString", "parse the form: %v", err))
		return
	}
	action := r.Form.Get("Action")
	op := s.ops[action]
	if op == nil {
		s.fail(w, senderError("InvalidAction", "The action %s is not valid for this web service (not served locally).", action))
		return
	}
	result, err := op(r.Context(), r.Form)
	if err != nil {
		s.fail(w, asAPIError(err))
		return
	}
	data, err := s.encode(action, result)
	if err != nil {
		s.fail(w, asAPIError(err))
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write(data)
}

// encode writes <ActionResponse xmlns=...><ActionResult>result</ActionResult>
// <ResponseMetadata><RequestId>...</RequestId></ResponseMetadata></ActionResponse>.
func (s awsQuery) encode(action string, result any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	response := xml.StartElement{Name: xml.Name{Local: action + "Response"}, Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: s.namespace}}}
	if err := enc.EncodeToken(response); err != nil {
		return nil, err
	}
	resultElem := xml.StartElement{Name: xml.Name{Local: action + "Result"}}
	if result == nil {
		result = struct{}{}
	}
	if err := enc.EncodeElement(result, resultElem); err != nil {
		return nil, err
	}
	meta := struct {
		RequestID string `xml:"RequestId"`
	}{uuid.NewString()}
	if err := enc.EncodeElement(meta, xml.StartElement{Name: xml.Name{Local: "ResponseMetadata"}}); err != nil {
		return nil, err
	}
	if err := enc.EncodeToken(response.End()); err != nil {
		return nil, err
	}
	if err := enc.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (s awsQuery) fail(w http.ResponseWriter, e *apiError) {
	var body queryErrorResponse
	body.Xmlns = s.namespace
	body.Error.Type = "Sender"
	if e.Status >= 500 {
		body.Error.Type = "Receiver"
	}
	body.Error.Code, body.Error.Message, body.RequestID = e.Code, e.Message, uuid.NewString()
	data, err := xml.Marshal(body)
	if err != nil {
		data = []byte("<ErrorResponse><Error><Code>InternalFailure</Code></Error></ErrorResponse>")
	}
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(e.Status)
	_, _ = w.Write(append([]byte(xml.Header), data...))
}

// member is awsQuery's list item element.
type member[T any] struct {
	Members []T `xml:"member"`
}

func itoa(n int) string { return strconv.Itoa(n) }
