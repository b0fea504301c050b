package awsapi

import (
	"context"
	"net/http"
	"net/url"

	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// STS serves GetCallerIdentity over awsQuery: the rig's account, which
// doctor prints.
type STS struct{ account string }

// NewSTS returns an STS stand-in for the rig's account.
func NewSTS() *STS { return &STS{account: sqsqueue.DefaultAccountID} }

// Handler is the HTTP handler of the STS API.
func (s *STS) Handler() http.Handler {
	return awsQuery{namespace: "https://sts.amazonaws.com/doc/2011-06-15/", ops: map[string]queryOp{
		"GetCallerIdentity": func(context.Context, url.Values) (any, error) {
			return struct{ Account, Arn, UserId string }{s.account, "arn:aws:iam::" + s.account + ":user/geolocate-local", "GEOLOCATELOCAL"}, nil
		},
	}}
}
