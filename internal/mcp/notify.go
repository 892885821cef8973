package mcp

import "context"

type notifyKey struct{}

// withNotify attaches the sink for notifications a request produces.
func withNotify(ctx context.Context, notify func(*Notification)) context.Context {
	if notify == nil {
		notify = func(*Notification) {}
	}
	return context.WithValue(ctx, notifyKey{}, notify)
}

// notifierFrom returns the request's notification sink (a no-op when none).
func notifierFrom(ctx context.Context) func(*Notification) {
	if n, ok := ctx.Value(notifyKey{}).(func(*Notification)); ok {
		return n
	}
	return func(*Notification) {}
}
