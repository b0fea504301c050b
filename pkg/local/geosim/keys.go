package geosim

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// KeyPrefix starts every key, as in the contract. Keys the simulator makes
// continue with "sim_" and random hex so they can never pass for real ones.
const KeyPrefix = "geo_"

const generatedKeyPrefix = KeyPrefix + "sim_"

// apiKey is one named key. Its value is only the map key in Server.keys, so
// records and logs, which use id and name, can never hold it.
type apiKey struct {
	id   string // internal, e.g. "key-3"; stable across regeneration
	name string
	org  string
}

func newKeyValue() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return generatedKeyPrefix + hex.EncodeToString(b)
}

// IssueKey creates a key named name for org and returns its value (shown
// once, as with the real service). The organisation is created with no
// credits if it does not exist.
func (s *Server) IssueKey(org, name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issueKeyLocked(org, name, newKeyValue())
}

func (s *Server) issueKeyLocked(org, name, value string) string {
	s.accountLocked(org)
	s.keySeq++
	s.keys[value] = &apiKey{id: fmt.Sprintf("key-%d", s.keySeq), name: name, org: org}
	return value
}

// RegenerateKey replaces oldKey with a new value, the way a compromised key
// is rotated; oldKey stops working at once (401). It returns "" when oldKey
// is not a live key.
func (s *Server) RegenerateKey(oldKey string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[oldKey]
	if !ok {
		return ""
	}
	delete(s.keys, oldKey)
	value := newKeyValue()
	s.keys[value] = k
	return value
}

// RevokeKey deletes key; it reports whether the key was live.
func (s *Server) RevokeKey(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.keys[key]
	delete(s.keys, key)
	return ok
}

// DemoKey is the value of the key issued at start for Config.Org.
func (s *Server) DemoKey() string { return s.demoKey }

// lookupKeyLocked finds the key sent in a request; only the contract's
// prefix is accepted.
func (s *Server) lookupKeyLocked(value string) (*apiKey, bool) {
	if !strings.HasPrefix(value, KeyPrefix) {
		return nil, false
	}
	k, ok := s.keys[value]
	return k, ok
}
