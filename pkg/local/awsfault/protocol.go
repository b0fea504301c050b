package awsfault

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strings"
)

// Service is the AWS service behind a proxy: it names operations and
// writes error answers in the service's wire protocol.
type Service int

const (
	// DynamoDB speaks awsJson1_0 (X-Amz-Target DynamoDB_20120810.<Op>).
	DynamoDB Service = iota + 1
	// SecretsManager speaks awsJson1_1 (X-Amz-Target secretsmanager.<Op>).
	SecretsManager
	// S3 speaks restXml, path-style (/bucket/key).
	S3
)

func (s Service) String() string {
	switch s {
	case DynamoDB:
		return "DynamoDB"
	case SecretsManager:
		return "Secrets Manager"
	case S3:
		return "S3"
	}
	return "unknown service"
}

// operation names the API operation of req, "" when it cannot tell.
func (s Service) operation(req *http.Request) string {
	if s != S3 {
		target := req.Header.Get("X-Amz-Target")
		if i := strings.LastIndexByte(target, '.'); i >= 0 {
			return target[i+1:]
		}
		return ""
	}
	return s3Operation(req)
}

// s3Operation names the S3 operations a path-style request can be.
func s3Operation(req *http.Request) string {
	path := strings.TrimPrefix(req.URL.Path, "/")
	bucket, key, _ := strings.Cut(path, "/")
	q := req.URL.Query()
	if bucket == "" {
		return "ListBuckets"
	}
	if key == "" {
		switch req.Method {
		case http.MethodGet:
			switch {
			case q.Has("versions"):
				return "ListObjectVersions"
			case q.Has("versioning"):
				return "GetBucketVersioning"
			case q.Get("list-type") == "2":
				return "ListObjectsV2"
			}
			return "ListObjects"
		case http.MethodPut:
			if q.Has("versioning") {
				return "PutBucketVersioning"
			}
			return "CreateBucket"
		case http.MethodHead:
			return "HeadBucket"
		case http.MethodDelete:
			return "DeleteBucket"
		case http.MethodPost:
			if q.Has("delete") {
				return "DeleteObjects"
			}
		}
		return ""
	}
	switch req.Method {
	case http.MethodGet:
		return "GetObject"
	case http.MethodHead:
		return "HeadObject"
	case http.MethodPut:
		if req.Header.Get("X-Amz-Copy-Source") != "" {
			return "CopyObject"
		}
		return "PutObject"
	case http.MethodDelete:
		return "DeleteObject"
	}
	return ""
}

// writeError answers req with f's status and an error body in the
// service's protocol, as the SDK's deserializers expect it.
func (s Service) writeError(w http.ResponseWriter, req *http.Request, f Fault, requestID string) {
	h := w.Header()
	switch s {
	case DynamoDB, SecretsManager:
		typ, contentType := f.Code, "application/x-amz-json-1.1"
		if s == DynamoDB {
			typ, contentType = "com.amazonaws.dynamodb.v20120810#"+f.Code, "application/x-amz-json-1.0"
		}
		body, _ := json.Marshal(map[string]string{"__type": typ, "message": f.Message})
		if s == DynamoDB && len(f.Reasons) > 0 {
			body = cancellationBody(typ, f)
		}
		h.Set("Content-Type", contentType)
		h.Set("X-Amzn-Requestid", requestID)
		h.Set("X-Amzn-Errortype", f.Code)
		w.WriteHeader(f.Status)
		_, _ = w.Write(body)
	case S3:
		h.Set("X-Amz-Request-Id", requestID)
		if req.Method == http.MethodHead {
			// S3 answers HEAD errors without a body: the SDK reads the
			// status only.
			w.WriteHeader(f.Status)
			return
		}
		body, _ := xml.Marshal(struct {
			XMLName   xml.Name `xml:"Error"`
			Code      string
			Message   string
			RequestID string `xml:"RequestId"`
		}{Code: f.Code, Message: f.Message, RequestID: requestID})
		h.Set("Content-Type", "application/xml")
		w.WriteHeader(f.Status)
		_, _ = w.Write([]byte(xml.Header))
		_, _ = w.Write(body)
	default:
		http.Error(w, f.Code+": "+f.Message, f.Status)
	}
}

// cancellationBody is a TransactionCanceledException's body as DynamoDB
// (and DynamoDB Local) sends it: "Message" capitalised, and one
// CancellationReasons entry per item, an item without an error as code
// "None" and no message.
func cancellationBody(typ string, f Fault) []byte {
	type reason struct {
		Code    string
		Message string `json:",omitempty"`
	}
	reasons := make([]reason, 0, len(f.Reasons))
	for _, code := range f.Reasons {
		reasons = append(reasons, reason{Code: code, Message: reasonMessages[code]})
	}
	body, _ := json.Marshal(struct {
		Type                string `json:"__type"`
		CancellationReasons []reason
		Message             string
	}{typ, reasons, f.Message})
	return body
}
