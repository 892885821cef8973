# Floor child of nexus-bench in R: what a pool costs at the least. It speaks
# the pool protocol's framing (a 4-byte big-endian length, then a JSON
# object) on the descriptors NEXUS_POOL_IN and NEXUS_POOL_OUT, opened as the
# R runtime opens them, and nothing more: a call {"args":[a,b]} is answered
# {"value":a+b}. A "json" message times jsonlite's parse + toJSON of a file
# here, so that the JSON floor does not include moving the bytes. Replies
# are built with sprintf, as the runtime builds its frames: jsonlite's
# toJSON costs some 300 µs a call, more than the rest of a round trip.
in_con <- fifo(paste0("/dev/fd/", Sys.getenv("NEXUS_POOL_IN")), open = "rb", blocking = TRUE)
out_con <- file(paste0("/dev/fd/", Sys.getenv("NEXUS_POOL_OUT")), open = "wb", raw = TRUE)

read_bytes <- function(n) {
  out <- raw(0)
  while (length(out) < n) {
    chunk <- readBin(in_con, "raw", min(n - length(out), 1048576))
    if (!length(chunk)) return(NULL)
    out <- c(out, chunk)
  }
  out
}

send <- function(text) {
  bytes <- charToRaw(text)
  n <- length(bytes)
  writeBin(as.raw(c(n %/% 16777216, n %/% 65536 %% 256, n %/% 256 %% 256, n %% 256)), out_con)
  writeBin(bytes, out_con)
  flush(out_con)
}

repeat {
  head <- read_bytes(4)
  if (is.null(head)) break
  n <- sum(as.numeric(as.integer(head)) * c(16777216, 65536, 256, 1))
  message <- jsonlite::parse_json(rawToChar(read_bytes(n)))
  if (identical(message$type, "call")) {
    reply <- sprintf('{"type":"result","id":%d,"value":%d}', message$id, message$args[[1]] + message$args[[2]])
  } else if (identical(message$type, "json")) {
    txt <- readChar(message$path, file.size(message$path), useBytes = TRUE)
    t0 <- Sys.time()
    value <- jsonlite::parse_json(txt, simplifyVector = TRUE)
    t1 <- Sys.time()
    text <- jsonlite::toJSON(value, digits = NA)
    t2 <- Sys.time()
    ms <- function(d) as.numeric(d, units = "secs") * 1000
    reply <- sprintf('{"type":"json","id":%d,"decode_ms":%.6f,"encode_ms":%.6f,"same":%s}',
                     message$id, ms(t1 - t0), ms(t2 - t1), tolower(identical(as.character(text), txt)))
  } else {
    break
  }
  send(reply)
}
