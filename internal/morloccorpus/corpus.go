package morloccorpus

import (
	"fmt"
	"path/filepath"
)

// Programs lists the corpus's programs in dir (testdata/morloc): each
// folder with a manifest.json. Fewer than ten means dir is not the corpus.
func Programs(dir string) ([]string, error) {
	manifests, err := filepath.Glob(filepath.Join(dir, "*", "manifest.json"))
	if err != nil {
		return nil, err
	}
	var progs []string
	for _, m := range manifests {
		progs = append(progs, filepath.Base(filepath.Dir(m)))
	}
	if len(progs) < 10 {
		return nil, fmt.Errorf("%d programs in %s, want the corpus", len(progs), dir)
	}
	return progs, nil
}
