package metrics

// The process's own series, named and described as Prometheus's Go client
// shows them; each system reads what it can (process_linux.go, ...), and a
// series whose reading fails is left off the page, as that client does.

type processSeries struct{ name, help, kind string }

var (
	procCPU       = processSeries{"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter"}
	procOpenFDs   = processSeries{"process_open_fds", "Number of open file descriptors.", "gauge"}
	procMaxFDs    = processSeries{"process_max_fds", "Maximum number of open file descriptors.", "gauge"}
	procVSize     = processSeries{"process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge"}
	procMaxVSize  = processSeries{"process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", "gauge"}
	procRSS       = processSeries{"process_resident_memory_bytes", "Resident memory size in bytes.", "gauge"}
	procStartTime = processSeries{"process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge"}
	procNetIn     = processSeries{"process_network_receive_bytes_total", "Number of bytes received by the process over the network.", "counter"}
	procNetOut    = processSeries{"process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", "counter"}
)

func (p processSeries) family(v float64) family {
	return family{name: p.name, help: p.help, kind: p.kind, samples: []sample{{value: v}}}
}
