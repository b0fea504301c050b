package geosim

import "fmt"

// account is one organisation's plan: a subscription allowance used first,
// then a top-up balance. Guarded by Server.mu.
type account struct {
	org       string
	allowance int
	used      int // subscription credits used
	topUp     int
	charged   int // all credits charged, subscription and top-up
	granted   map[string]bool
}

func (a *account) subscriptionRemaining() int { return max(a.allowance-a.used, 0) }

func (a *account) available() int { return a.subscriptionRemaining() + a.topUp }

// charge takes cost credits, subscription first, then top-up. It reports
// false and takes nothing when the account cannot pay the whole cost.
func (a *account) charge(cost int) bool {
	if cost > a.available() {
		return false
	}
	fromSub := min(cost, a.subscriptionRemaining())
	a.used += fromSub
	a.topUp -= cost - fromSub
	a.charged += cost
	return true
}

// Balance is an account's credit position.
type Balance struct {
	Allowance             int // subscription allowance
	SubscriptionUsed      int
	SubscriptionRemaining int
	TopUp                 int // top-up balance
	Available             int // SubscriptionRemaining + TopUp
}

func (a *account) balance() Balance {
	return Balance{
		Allowance:             a.allowance,
		SubscriptionUsed:      a.used,
		SubscriptionRemaining: a.subscriptionRemaining(),
		TopUp:                 a.topUp,
		Available:             a.available(),
	}
}

// AddAccount creates the organisation org, or resets its plan if it exists,
// with a subscription allowance and a top-up balance. Keys and grants are
// kept.
func (s *Server) AddAccount(org string, allowance, topUp int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accountLocked(org)
	a.allowance, a.used, a.topUp = allowance, 0, topUp
}

// accountLocked returns org's account, creating an empty one.
func (s *Server) accountLocked(org string) *account {
	a, ok := s.accounts[org]
	if !ok {
		a = &account{org: org, granted: map[string]bool{}}
		s.accounts[org] = a
	}
	return a
}

// TopUp adds credits to org's top-up balance.
func (s *Server) TopUp(org string, credits int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[org]
	if !ok {
		return fmt.Errorf("top up %s: unknown organisation", org)
	}
	a.topUp += credits
	return nil
}

// Balance reports org's credits; ok is false for an unknown organisation.
func (s *Server) Balance(org string) (b Balance, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[org]
	if !ok {
		return Balance{}, false
	}
	return a.balance(), true
}

// Charged is the total of credits charged to org since the start (or the
// last ResetCharged).
func (s *Server) Charged(org string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.accounts[org]; ok {
		return a.charged
	}
	return 0
}

// ResetCharged zeroes every account's Charged counter (balances are kept).
func (s *Server) ResetCharged() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.accounts {
		a.charged = 0
	}
}
