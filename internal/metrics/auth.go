package metrics

import "sync"

// maxSubjects bounds the subject label of nexus_auth_requests_total: a lab
// has a handful of users, and a flood of distinct subjects (a client per
// token) must not grow the registry without bound. Past it, "other".
const maxSubjects = 200

// authMetrics count what OAuth's resource server decided, by the token's
// subject or by the reason of a refusal: never by anything of the token.
type authMetrics struct {
	accepted counterVec
	refused  counterVec

	mu       sync.Mutex
	subjects map[string]bool
}

func newAuthMetrics() *authMetrics {
	return &authMetrics{
		accepted: newCounterVec("nexus_auth_requests_total",
			"Requests whose access token was accepted, by the token's subject (\"other\" past 200 subjects).", "subject"),
		refused: newCounterVec("nexus_auth_refusals_total",
			"Requests refused for their credentials, by reason (missing, expired, audience, scope, ...).", "reason"),
		subjects: map[string]bool{},
	}
}

// AuthAccepted counts a request whose token was accepted, by its subject.
func (m *Metrics) AuthAccepted(subject string) {
	if m == nil {
		return
	}
	a := m.auth
	a.mu.Lock()
	if !a.subjects[subject] {
		if len(a.subjects) >= maxSubjects {
			subject = "other"
		} else {
			a.subjects[subject] = true
		}
	}
	a.mu.Unlock()
	a.accepted.inc(labelValues{subject})
}

// AuthRefused counts a request refused for its credentials, by reason.
func (m *Metrics) AuthRefused(reason string) {
	if m == nil {
		return
	}
	m.auth.refused.inc(labelValues{reason})
}
