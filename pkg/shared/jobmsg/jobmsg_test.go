package jobmsg

import (
	"strings"
	"testing"
)

func TestBodyParsesBack(t *testing.T) {
	for _, o := range []Object{
		{Job: "j-20261202-abcdef", Kind: KindBackfill, Bucket: "b", Key: "a b.jpg", VersionID: "v1", ETag: "e", Size: 10},
		{Job: "j-20261202-abcdef", Kind: KindReprocess, Run: "r2", ModelID: "m", CreditsPerCall: 2, Replaces: "r1", Bucket: "b", Key: "k", Size: 1},
	} {
		body, err := Body(o)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(body, `{"`+Field+`":`) {
			t.Errorf("body %s does not start with %s", body, Field)
		}
		got, ok, err := Parse([]byte(body))
		if err != nil || !ok || got != o {
			t.Errorf("Parse(%s) = %+v, %v, %v; want %+v", body, got, ok, err, o)
		}
	}
}

func TestBodyRefusesIncomplete(t *testing.T) {
	for name, o := range map[string]Object{
		"no job":            {Kind: KindBackfill, Bucket: "b", Key: "k"},
		"no key":            {Job: "j", Kind: KindBackfill, Bucket: "b"},
		"unknown kind":      {Job: "j", Kind: "copy", Bucket: "b", Key: "k"},
		"backfill with run": {Job: "j", Kind: KindBackfill, Run: "r", Bucket: "b", Key: "k"},
		"reprocess no run":  {Job: "j", Kind: KindReprocess, Bucket: "b", Key: "k"},
		"negative price":    {Job: "j", Kind: KindBackfill, Bucket: "b", Key: "k", CreditsPerCall: -1},
	} {
		if _, err := Body(o); err == nil {
			t.Errorf("%s: Body accepted %+v", name, o)
		}
	}
}

func TestParseOtherBodies(t *testing.T) {
	for _, body := range []string{`{"Records": []}`, `not json`, `{"geolocate_reprocess": {"run": "r"}}`} {
		if _, ok, err := Parse([]byte(body)); ok || err != nil {
			t.Errorf("Parse(%s) = ok %v, err %v: not a job message", body, ok, err)
		}
	}
	if _, ok, err := Parse([]byte(`{"geolocate_job": {"job": "j", "kind": "backfill", "bucket": "b"}}`)); !ok || err == nil {
		t.Errorf("a job message without a key: ok %v, err %v", ok, err)
	}
}
