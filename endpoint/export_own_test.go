package endpoint

// FlightWaiters returns how many runs of s wait now for a flight that
// another run computes, so that a test can start a flight's computation
// once every run it means to join has joined.
func FlightWaiters(s *Service) int {
	s.runFlights.mu.Lock()
	defer s.runFlights.mu.Unlock()
	n := 0
	for _, f := range s.runFlights.m {
		n += f.waiting
	}
	return n
}
