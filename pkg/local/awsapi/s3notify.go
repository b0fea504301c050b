package awsapi

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
)

// CreatedObject is an object a client created through the S3 front:
// what S3's ObjectCreated notification starts from.
type CreatedObject struct {
	Bucket, Key, VersionID, ETag string
	// EventName is S3's: ObjectCreated:Put, :Copy or :CompleteMultipartUpload.
	EventName string
}

// S3Notifications is a front to a local S3 (gofakes3 does not notify)
// that forwards every request and, for each one that created an object
// (PutObject, CopyObject, CompleteMultipartUpload: 200), calls OnCreated,
// as the bucket's event notification to the upload queue would. It reads
// path-style requests only, which is what the SDK sends to a local
// endpoint (lambdarun.S3Options).
type S3Notifications struct {
	proxy     *httputil.ReverseProxy
	onCreated func(CreatedObject)
}

// NewS3Notifications returns the front of the S3 at target.
func NewS3Notifications(target string, onCreated func(CreatedObject)) (*S3Notifications, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	n := &S3Notifications{proxy: httputil.NewSingleHostReverseProxy(u), onCreated: onCreated}
	n.proxy.ModifyResponse = n.observe
	return n, nil
}

// Handler is the front's HTTP handler.
func (n *S3Notifications) Handler() http.Handler { return n.proxy }

func (n *S3Notifications) observe(resp *http.Response) error {
	r := resp.Request
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	bucket, key, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if !ok || key == "" {
		return nil // a bucket operation
	}
	q := r.URL.Query()
	var event string
	switch {
	case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "" && !q.Has("partNumber"):
		event = "ObjectCreated:Copy"
	case r.Method == http.MethodPut && !q.Has("partNumber") && !q.Has("tagging") && !q.Has("acl") && !q.Has("retention") && !q.Has("legal-hold"):
		event = "ObjectCreated:Put"
	case r.Method == http.MethodPost && q.Has("uploadId"):
		event = "ObjectCreated:CompleteMultipartUpload"
	default:
		return nil
	}
	// r.URL.Path is the decoded path: the key as stored, as S3 names it in
	// the notification before URL-encoding it there.
	n.onCreated(CreatedObject{Bucket: bucket, Key: key, VersionID: resp.Header.Get("X-Amz-Version-Id"),
		ETag: resp.Header.Get("ETag"), EventName: event})
	return nil
}
