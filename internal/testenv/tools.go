package testenv

import (
	"os/exec"
	"sync"
	"testing"
)

// The languages whose pools the tests run need their interpreters here;
// C++ pools are built by each test that needs one.

// PythonMissing says why Python pools cannot run here, or "" when they can.
func PythonMissing() string {
	if _, err := exec.LookPath("python3"); err != nil {
		return "python3 is not installed"
	}
	return ""
}

// RMissing says why R pools cannot run here (no Rscript, or no jsonlite
// for it), or "" when they can.
var RMissing = sync.OnceValue(func() string {
	if _, err := exec.LookPath("Rscript"); err != nil {
		return "Rscript is not installed"
	}
	if err := exec.Command("Rscript", "-e", `quit(status = !requireNamespace("jsonlite", quietly = TRUE))`).Run(); err != nil {
		return "R's jsonlite package is not installed"
	}
	return ""
})

// NeedPython stops a test that needs Python pools here (MissingTool).
func NeedPython(t testing.TB) {
	t.Helper()
	if why := PythonMissing(); why != "" {
		MissingTool(t, why)
	}
}

// NeedR stops a test that needs R pools here (MissingTool).
func NeedR(t testing.TB) {
	t.Helper()
	if why := RMissing(); why != "" {
		MissingTool(t, why)
	}
}
