# The nexus pool runtime for R.
#
# A pool file loads this runtime, registers its functions by mid and hands
# control to nexus:
#
#     source(file.path(Sys.getenv("NEXUS_RUNTIME_DIR"), "r", "nexus.R"))
#     intro <- function(name) paste0("A wild ", name, " appears!")
#     nexus_serve(list("14" = intro))
#
# nexus starts the file, sends it calls over the nexus pool protocol
# (docs/pool-protocol.md in the nexus repository, "The R runtime" describes
# this file) and returns the results to its clients. The runtime needs base R
# and the jsonlite package only. It runs one call at a time: nexus gets
# parallelism by starting several worker processes.
#
# Public functions: nexus_serve, nexus_progress, nexus_log, nexus_cancelled,
# nexus_sleep. Everything else lives in a private environment.

if (!requireNamespace("jsonlite", quietly = TRUE)) {
  stop("the nexus R runtime needs the jsonlite package (Debian: apt install r-cran-jsonlite)")
}

nexus_serve <- nexus_progress <- nexus_log <- nexus_cancelled <- nexus_sleep <- NULL

local({
  PROTOCOL <- 1L
  MAX_FRAME <- 268435456 # 256 MiB
  POLL_EVERY <- 0.02 # seconds between looks at fd 3 from inside a call
  STRING_RE <- '"[^"\\\\]*+(?:\\\\.[^"\\\\]*+)*+"' # a JSON string, escapes included

  state <- new.env(parent = emptyenv())
  state$serving <- FALSE
  state$in_con <- NULL # blocking reads of fd 3
  state$poll_con <- NULL # non-blocking reads of fd 3, to see cancel during a call
  state$out_con <- NULL # fd 4
  state$inbuf <- raw(0) # bytes of fd 3 read by a poll but not yet a whole frame
  state$queue <- list() # whole messages read by a poll, not yet handled
  state$current <- NULL # the call running now: list(id_json, progress, cancelled)
  state$last_poll <- 0

  # --- public API ------------------------------------------------------------

  nexus_serve <<- function(table) {
    table <- check_table(table, substitute(table))
    options(warn = 1) # a warning outside a call would otherwise wait for a top level that never comes
    open_descriptors()
    state$serving <- TRUE
    mids <- sort(as.numeric(names(table)))
    send(paste0(
      '{"type":"ready","protocol":', PROTOCOL, ',"lang":"r","pid":', Sys.getpid(),
      ',"mids":[', paste(sprintf("%.0f", mids), collapse = ","), '],"concurrent":false}'
    ))
    repeat {
      message <- next_message()
      if (is.null(message)) leave() # end of file without shutdown: nexus is gone
      switch(message[["type"]],
        call = run_call(table, message),
        cancel = mark_cancelled(message[["id"]]),
        shutdown = exit(0),
        NULL # other types: a newer nexus may send them
      )
    }
  }

  nexus_progress <<- function(done, total = NULL, message = NULL) {
    check_cancel()
    call <- state$current
    if (is.null(call) || !call$progress) {
      return(invisible(NULL))
    }
    frame <- paste0('{"type":"progress","id":', call$id_json, ',"progress":', progress_number("done", done))
    if (!is.null(total)) frame <- paste0(frame, ',"total":', progress_number("total", total))
    if (!is.null(message)) frame <- paste0(frame, ',"message":', json_strings(paste(as.character(message), collapse = " ")))
    send(paste0(frame, "}"))
    invisible(NULL)
  }

  nexus_log <<- function(level, data) {
    value <- tryCatch(json_encode(data), error = function(e) {
      json_strings(paste(deparse(data), collapse = "\n"))
    })
    frame <- paste0('{"type":"log"')
    if (!is.null(state$current)) frame <- paste0(frame, ',"id":', state$current$id_json)
    frame <- paste0(frame, ',"level":', json_strings(as.character(level)[1]), ',"data":', value, "}")
    if (!state$serving) {
      cat(frame, "\n", sep = "", file = stderr()) # a function run by hand: keep the record visible
      return(invisible(NULL))
    }
    send(frame)
    invisible(NULL)
  }

  nexus_cancelled <<- function() {
    poll()
    isTRUE(state$current$cancelled)
  }

  nexus_sleep <<- function(seconds) {
    if (is.null(state$current)) {
      Sys.sleep(seconds)
      return(invisible(NULL))
    }
    end <- now() + seconds
    repeat {
      check_cancel(force = TRUE)
      left <- end - now()
      if (left <= 0) break
      Sys.sleep(min(left, 0.05))
    }
    invisible(NULL)
  }

  # --- the dispatch table ----------------------------------------------------

  check_table <- function(table, expr) {
    usage <- 'nexus_serve wants a list of functions named by mid, such as list("14" = intro)'
    if (!is.list(table) || length(table) == 0 || is.null(names(table))) stop(usage, call. = FALSE)
    keys <- names(table)
    bad <- !grepl("^[0-9]+$", keys)
    if (any(bad)) stop(usage, ": the name \"", keys[bad][1], "\" is not a mid", call. = FALSE)
    for (i in seq_along(table)) {
      if (!is.function(table[[i]])) stop("nexus_serve: the entry for mid ", keys[i], " is not a function", call. = FALSE)
    }
    keys <- sprintf("%.0f", as.numeric(keys))
    if (anyDuplicated(keys)) stop("nexus_serve: mid ", keys[anyDuplicated(keys)], " appears twice", call. = FALSE)
    fnames <- function_names(expr, table, keys)
    entries <- lapply(seq_along(table), function(i) list(fn = table[[i]], name = fnames[i]))
    names(entries) <- keys
    entries
  }

  # function_names finds a name for each function, for tracebacks: the
  # symbol in nexus_serve(list("14" = intro)), else a global binding of it.
  function_names <- function(expr, table, keys) {
    out <- paste0("mid", keys)
    found <- rep(FALSE, length(out))
    if (is.call(expr) && identical(expr[[1]], quote(list)) && length(expr) == length(table) + 1) {
      parts <- as.list(expr)[-1]
      for (i in seq_along(parts)) {
        if (is.symbol(parts[[i]])) {
          out[i] <- as.character(parts[[i]])
          found[i] <- TRUE
        }
      }
    }
    globals <- ls(globalenv())
    for (i in which(!found)) {
      for (name in globals) {
        if (identical(get0(name, envir = globalenv(), inherits = FALSE), table[[i]])) {
          out[i] <- name
          break
        }
      }
    }
    out
  }

  # --- calls -----------------------------------------------------------------

  run_call <- function(table, message) {
    id <- message[["id"]]
    if (!is.numeric(id) || length(id) != 1 || is.na(id)) protocol_error("a call has no numeric id")
    id_json <- if (is.null(message[[".id_text"]])) format_integer(id) else message[[".id_text"]]
    poll(force = TRUE) # a cancel for this call may already be waiting behind it
    if (isTRUE(message[[".cancelled"]])) {
      return(send(cancelled_payload(id_json)))
    }
    if (!is.null(message[[".error"]])) {
      return(send(error_payload(id_json, message[[".error"]])))
    }
    mid <- message[["mid"]]
    entry <- if (is.numeric(mid) && length(mid) == 1 && !is.na(mid) && mid == trunc(mid)) table[[format_integer(mid)]]
    if (is.null(entry)) {
      mids <- sprintf("%.0f", sort(as.numeric(names(table))))
      shown <- if (is.numeric(mid) && length(mid) == 1) format_number(mid) else gsub("\n", " ", json_encode(mid))
      return(send(error_payload(id_json, sprintf("unknown mid %s (this pool has %s)", shown, paste(mids, collapse = ", ")))))
    }
    args <- message[["args"]]
    if (!is.list(args) || !is.null(names(args))) protocol_error(sprintf("call %s: args is not an array", id_json))
    args <- tryCatch(lapply(args, as_r), nexus_value_error = function(e) e)
    if (inherits(args, "nexus_value_error")) {
      return(send(error_payload(id_json, conditionMessage(args))))
    }
    state$current <- list(id_json = id_json, id = id, progress = isTRUE(message[["progress"]]), cancelled = FALSE)
    payload <- invoke(entry, args, id_json)
    state$current <- NULL
    send(payload)
  }

  # invoke applies the function to args and returns the reply's payload. The
  # call is built from symbols bound in a fresh environment, so that
  # tracebacks and warnings show fighterDamage(ac), not the data itself.
  invoke <- function(entry, args, id_json) {
    env <- new.env(parent = globalenv())
    assign(entry$name, entry$fn, envir = env)
    symbols <- argument_symbols(entry$fn, length(args), entry$name)
    for (i in seq_along(args)) assign(symbols[i], args[[i]], envir = env)
    user_call <- as.call(c(as.name(entry$name), lapply(symbols, as.name)))
    calls <- NULL
    outcome <- tryCatch(
      withCallingHandlers(
        list(kind = "value", value = withCallingHandlers(eval(user_call, env), warning = on_warning)),
        error = function(e) calls <<- sys.calls()
      ),
      nexus_cancelled = function(c) list(kind = "cancelled"),
      interrupt = function(c) list(kind = "cancelled"),
      error = function(e) list(kind = "error", error = e)
    )
    switch(outcome$kind,
      cancelled = cancelled_payload(id_json),
      error = error_payload(id_json, error_message(outcome$error), traceback_text(outcome$error, calls, user_call)),
      value = result_payload(id_json, outcome$value)
    )
  }

  # argument_symbols names the arguments after the function's parameters
  # where it has them.
  argument_symbols <- function(fn, n, fname) {
    params <- names(formals(if (is.primitive(fn)) args(fn) else fn))
    dots <- match("...", params)
    if (!is.na(dots)) params <- params[seq_len(dots - 1)]
    out <- sprintf("arg%d", seq_len(n))
    k <- min(n, length(params))
    out[seq_len(k)] <- params[seq_len(k)]
    clash <- which(out == fname | duplicated(out))
    out[clash] <- sprintf(".arg%d", clash)
    out
  }

  on_warning <- function(w) {
    text <- conditionMessage(w)
    # R integers are 32-bit: an overflow makes NA, which would reach the
    # client as null. A failed call is better than a wrong value.
    if (grepl("integer overflow", text, fixed = TRUE)) {
      stop(simpleError(paste0(text, " (R integers hold at most 2147483647: use as.numeric() for larger numbers)"), conditionCall(w)))
    }
    where <- conditionCall(w)
    cat(if (is.null(where)) "Warning: " else paste0("Warning in ", short_deparse(where), " : "), text, "\n", sep = "", file = stderr())
    tryInvokeRestart("muffleWarning")
  }

  error_message <- function(e) {
    text <- paste(conditionMessage(e), collapse = "\n")
    class_name <- class(e)[1]
    plain <- class_name %in% c("simpleError", "error")
    if (!nzchar(text)) {
      return(if (plain) "error" else class_name)
    }
    if (plain) text else paste0(class_name, ": ", text)
  }

  # traceback_text shows the error as R prints it, then the calls from the
  # pool function down to the error, most recent first, as traceback() does.
  traceback_text <- function(e, calls, user_call) {
    where <- conditionCall(e)
    text <- paste(conditionMessage(e), collapse = "\n")
    head <- if (is.null(where)) paste0("Error: ", text) else paste0("Error in ", short_deparse(where), " : ", text)
    start <- if (is.null(calls)) NA else Position(function(c) identical(c, user_call), calls)
    if (is.na(start)) {
      return(head)
    }
    frames <- calls[start:length(calls)]
    plumbing <- Position(function(c) is.call(c) && is.symbol(c[[1]]) &&
      as.character(c[[1]]) %in% c(".handleSimpleError", ".signalSimpleWarning"), frames)
    frames <- if (is.na(plumbing)) frames[-length(frames)] else frames[seq_len(plumbing - 1)]
    lines <- vapply(frames, short_deparse, "")
    paste(c(head, rev(sprintf("%d: %s", seq_along(lines), lines))), collapse = "\n")
  }

  short_deparse <- function(x) {
    text <- paste(deparse(x, width.cutoff = 500L, nlines = 1L), collapse = " ")
    if (nchar(text) > 200) paste0(substr(text, 1, 197), "...") else text
  }

  result_payload <- function(id_json, value) {
    encoded <- tryCatch(json_encode(value), error = function(e) e)
    if (inherits(encoded, "error")) {
      return(error_payload(id_json, paste0("cannot encode the result as JSON: ", conditionMessage(encoded))))
    }
    payload <- paste0('{"type":"result","id":', id_json, ',"value":', encoded, "}")
    size <- nchar(payload, type = "bytes")
    if (size > MAX_FRAME) {
      return(error_payload(id_json, sprintf("the result takes %.0f bytes, over the %d MiB frame limit", size, MAX_FRAME %/% 1048576)))
    }
    payload
  }

  error_payload <- function(id_json, message, traceback = NULL) {
    payload <- paste0('{"type":"error","id":', id_json, ',"message":', json_strings(message))
    if (!is.null(traceback)) payload <- paste0(payload, ',"traceback":', json_strings(traceback))
    paste0(payload, "}")
  }

  cancelled_payload <- function(id_json) {
    paste0('{"type":"error","id":', id_json, ',"message":"cancelled","cancelled":true}')
  }

  # --- cancellation ----------------------------------------------------------

  # check_cancel ends the current call when nexus has cancelled it. The
  # condition is not an error, so tryCatch(error = ) and try() let it pass.
  check_cancel <- function(force = FALSE) {
    poll(force)
    if (isTRUE(state$current$cancelled)) {
      stop(structure(class = c("nexus_cancelled", "condition"), list(message = "cancelled", call = NULL)))
    }
  }

  mark_cancelled <- function(id) {
    if (!is.numeric(id) || length(id) != 1) {
      return(invisible(NULL))
    }
    if (!is.null(state$current) && isTRUE(state$current$id == id)) state$current$cancelled <- TRUE
    for (i in seq_along(state$queue)) {
      queued <- state$queue[[i]]
      if (identical(queued[["type"]], "call") && isTRUE(queued[["id"]] == id)) state$queue[[i]][[".cancelled"]] <- TRUE
    }
    invisible(NULL)
  }

  # poll reads what fd 3 holds without waiting: a cancel for the running
  # call, or shutdown, must be seen before the call ends. Calls that arrive
  # meanwhile wait in the queue, in order.
  poll <- function(force = FALSE) {
    if (is.null(state$poll_con)) {
      return(invisible(NULL))
    }
    t <- now()
    if (!force && t - state$last_poll < POLL_EVERY) {
      return(invisible(NULL))
    }
    state$last_poll <- t
    repeat {
      chunk <- tryCatch(readBin(state$poll_con, "raw", 65536L), error = function(e) NULL) # EAGAIN: nothing waiting
      if (is.null(chunk)) break
      if (length(chunk) == 0) leave() # end of file without shutdown: nexus is gone
      state$inbuf <- c(state$inbuf, chunk)
      if (length(chunk) < 65536L) break
    }
    while (length(state$inbuf) >= 4) {
      n <- frame_length(state$inbuf[1:4])
      if (length(state$inbuf) < 4 + n) break
      payload <- state$inbuf[4 + seq_len(n)]
      state$inbuf <- state$inbuf[-seq_len(4 + n)]
      message <- decode(payload)
      switch(message[["type"]],
        shutdown = exit(0),
        cancel = mark_cancelled(message[["id"]]),
        call = state$queue[[length(state$queue) + 1]] <- message,
        NULL
      )
    }
    invisible(NULL)
  }

  now <- function() proc.time()[["elapsed"]]

  # --- values: JSON to R ---------------------------------------------------

  # as_r turns a parsed JSON value (jsonlite, simplifyVector = FALSE) into a
  # natural R value: an array of scalars of one type (numbers count as one
  # type) becomes an atomic vector, with NA for null; other arrays become
  # unnamed lists; objects become named lists; [] becomes logical(0).
  as_r <- function(x) {
    if (!is.list(x)) {
      if (is.double(x) && is.infinite(x)) value_error("a number in the arguments is beyond the range of R numbers (about 1.8e308)")
      return(x)
    }
    if (!is.null(names(x))) {
      # R cannot tell a name "" from no name: {"":1} would come back as [1].
      if (!all(nzchar(names(x)))) value_error("an object with an empty key (\"\") cannot be represented in R: R treats an empty name as no name")
      return(lapply(x, as_r))
    }
    n <- length(x)
    if (n == 0) {
      return(logical(0))
    }
    types <- vapply(x, typeof, "", USE.NAMES = FALSE)
    scalar <- types %in% c("logical", "integer", "double", "character")
    nulls <- types == "NULL"
    if (all(scalar | nulls) && any(scalar)) {
      kinds <- unique(types[scalar])
      if (length(kinds) == 1 || all(kinds %in% c("integer", "double"))) {
        out <- vector(if (length(kinds) == 1) kinds else "double", n)
        out[scalar] <- unlist(x[scalar], use.names = FALSE)
        out[nulls] <- NA
        if (is.double(out) && any(is.infinite(out))) value_error("a number in the arguments is beyond the range of R numbers (about 1.8e308)")
        return(out)
      }
    }
    lapply(x, as_r)
  }

  value_error <- function(text) {
    stop(structure(class = c("nexus_value_error", "error", "condition"), list(message = text, call = NULL)))
  }

  # check_call_text finds what jsonlite would silently change in a call:
  # integers that no double holds exactly (9007199254740993 would become
  # ...992) and U+0000 in strings (cut off). It returns the error message,
  # or NULL. Integers of up to 15 digits are always exact.
  check_call_text <- function(txt, id_text = NULL) {
    if (grepl("\\u0000", txt, fixed = TRUE) && grepl("(?<!\\\\)(?:\\\\\\\\)*\\\\u0000", txt, perl = TRUE)) {
      return("a string in the arguments holds the character U+0000, which R strings cannot hold")
    }
    if (!grepl("[0-9]{16}", txt, perl = TRUE)) {
      return(NULL)
    }
    bare <- gsub(STRING_RE, '""', txt, perl = TRUE)
    numbers <- regmatches(bare, gregexpr("(?<![0-9.eE+-])-?[0-9]{16,}(?![0-9.eE])", bare, perl = TRUE))[[1]]
    skip <- if (is.null(id_text)) NA else match(id_text, numbers)
    if (!is.na(skip)) numbers <- numbers[-skip] # the call's own id is no argument
    for (number in numbers) {
      # %.0f prints a double's exact value: equal text means R holds it exactly.
      if (!identical(sprintf("%.0f", as.numeric(number)), number)) {
        return(paste0(
          "integer ", number, " cannot be represented exactly in R: ",
          "integers beyond 32 bits arrive as doubles, which hold every integer only up to 2^53 = 9007199254740992"
        ))
      }
    }
    NULL
  }

  # --- values: R to JSON ---------------------------------------------------

  # json_encode writes an R value as JSON text. A length-1 atomic vector is a
  # scalar; wrap it in I() (or make it a list) to send a one-element array.
  json_encode <- function(x) {
    if (is.null(x)) {
      return("null")
    }
    boxed <- inherits(x, "AsIs")
    if (is.data.frame(x)) {
      return(json_rows(x))
    }
    x <- plain(x)
    if (is.list(x)) {
      return(json_list(x))
    }
    if (!is.atomic(x)) stop("cannot encode a value of type ", typeof(x), " as JSON")
    if (is.raw(x)) {
      return(json_strings(jsonlite::base64_enc(x))) # the protocol's form for bytes
    }
    d <- dim(x)
    if (length(d) == 2) {
      return(json_matrix(x))
    }
    if (length(d) > 2) stop("cannot encode an array of ", length(d), " dimensions as JSON")
    parts <- json_elements(x)
    if (length(parts) == 1 && !boxed) parts else paste0("[", paste(parts, collapse = ","), "]")
  }

  # plain turns the classes JSON has a form for into base types.
  plain <- function(x) {
    if (is.factor(x)) {
      return(as.character(x))
    }
    if (inherits(x, "Date")) {
      return(format(x, "%Y-%m-%d"))
    }
    if (inherits(x, "POSIXt")) {
      return(format(as.POSIXct(x), "%Y-%m-%dT%H:%M:%OSZ", tz = "UTC"))
    }
    if (isS4(x) || is.environment(x) || is.function(x)) stop("cannot encode a value of type ", typeof(x), " as JSON")
    x
  }

  # json_elements encodes each element of a vector or list on its own.
  json_elements <- function(x) {
    switch(typeof(x),
      logical = {
        out <- rep("false", length(x))
        out[x %in% TRUE] <- "true"
        out[is.na(x)] <- "null"
        out
      },
      integer = {
        out <- sprintf("%d", as.vector(unclass(x)))
        out[is.na(x)] <- "null"
        out
      },
      double = json_doubles(as.vector(unclass(x))),
      character = json_strings(as.vector(x)),
      list = vapply(x, json_encode, "", USE.NAMES = FALSE),
      stop("cannot encode a value of type ", typeof(x), " as JSON")
    )
  }

  # json_doubles writes whole numbers below 1e21 as integers (their exact
  # value, as Go and JavaScript do) and others in the fewest significant
  # digits that read back as the same double.
  json_doubles <- function(x) {
    if (any(is.nan(x))) stop("the value holds NaN, which JSON cannot represent")
    if (any(is.infinite(x))) stop("the value holds an infinite number, which JSON cannot represent")
    out <- rep("null", length(x))
    known <- !is.na(x)
    whole <- known & x == trunc(x) & abs(x) < 1e21
    out[whole] <- sprintf("%.0f", x[whole])
    rest <- which(known & !whole)
    for (digits in c(15, 16, 17)) {
      if (!length(rest)) break
      text <- sprintf(paste0("%.", digits, "g"), x[rest])
      same <- if (digits == 17) rep(TRUE, length(rest)) else reads_back(text, x[rest])
      out[rest[same]] <- text[same]
      rest <- rest[!same]
    }
    out
  }

  # reads_back checks with a correctly rounding parser (jsonlite's strtod),
  # not R's own, which may differ in the last bit.
  reads_back <- function(text, x) {
    parsed <- jsonlite::parse_json(paste0("[", paste(text, collapse = ","), "]"), simplifyVector = TRUE)
    as.double(parsed) == x
  }

  json_strings <- function(x) {
    if (!length(x)) {
      return(character(0))
    }
    missing <- is.na(x)
    x <- enc2utf8(as.character(x))
    bad <- !missing & !validUTF8(x)
    if (any(bad)) stop("string ", which(bad)[1], " is not valid UTF-8")
    x <- gsub("\\", "\\\\", x, fixed = TRUE)
    x <- gsub("\"", "\\\"", x, fixed = TRUE)
    if (any(grepl("[\001-\037]", x[!missing], perl = TRUE))) {
      for (code in 1:31) {
        char <- intToUtf8(code)
        escape <- switch(as.character(code),
          "8" = "\\b", "9" = "\\t", "10" = "\\n", "12" = "\\f", "13" = "\\r",
          sprintf("\\u%04x", code)
        )
        x <- gsub(char, escape, x, fixed = TRUE)
      }
    }
    out <- paste0("\"", x, "\"")
    out[missing] <- "null"
    out
  }

  json_list <- function(x) {
    parts <- json_elements(x)
    keys <- names(x)
    if (is.null(keys) || (length(keys) > 0 && !any(nzchar(keys) & !is.na(keys)))) {
      return(paste0("[", paste(parts, collapse = ","), "]"))
    }
    if (anyNA(keys) || !all(nzchar(keys))) {
      stop("a list with some names missing cannot be encoded as JSON: name every element (an object) or none (an array)")
    }
    if (!length(x)) {
      return("{}")
    }
    paste0("{", paste(paste0(json_strings(keys), ":", parts), collapse = ","), "}")
  }

  json_matrix <- function(m) {
    cells <- json_elements(if (is.list(m)) m else as.vector(m))
    dim(cells) <- dim(m)
    rows <- character(nrow(m))
    for (i in seq_len(nrow(m))) rows[i] <- paste0("[", paste(cells[i, ], collapse = ","), "]")
    paste0("[", paste(rows, collapse = ","), "]")
  }

  # json_rows writes a data frame as an array of row objects; NA is null.
  json_rows <- function(df) {
    n <- nrow(df)
    if (n == 0) {
      return("[]")
    }
    keys <- json_strings(names(df))
    rows <- rep("", n)
    for (k in seq_along(df)) {
      cells <- json_elements(plain(df[[k]]))
      rows <- paste0(rows, if (k > 1) ",", keys[k], ":", cells)
    }
    paste0("[", paste0("{", rows, "}", collapse = ","), "]")
  }

  progress_number <- function(what, x) {
    if (!is.numeric(x) || length(x) != 1 || !is.finite(x)) stop("nexus_progress: ", what, " must be one finite number", call. = FALSE)
    json_elements(x)
  }

  format_integer <- function(x) if (is.integer(x)) sprintf("%d", x) else sprintf("%.0f", x)

  format_number <- function(x) if (is.double(x) && x != trunc(x)) json_doubles(x) else format_integer(x)

  # --- frames ----------------------------------------------------------------

  open_descriptors <- function() {
    in_fd <- Sys.getenv("NEXUS_POOL_IN", NA)
    out_fd <- Sys.getenv("NEXUS_POOL_OUT", NA)
    if (is.na(in_fd) || is.na(out_fd)) {
      cat("This program is a nexus pool: nexus starts it and talks to it over a pipe ",
        "(NEXUS_POOL_IN is not set). Run the program through nexus instead.\n",
        sep = "", file = stderr()
      )
      exit(2)
    }
    if (!grepl("^[0-9]+$", in_fd) || !grepl("^[0-9]+$", out_fd)) {
      fail_start(sprintf("bad NEXUS_POOL_IN/NEXUS_POOL_OUT (%s, %s)", in_fd, out_fd))
    }
    in_path <- paste0("/dev/fd/", in_fd)
    # fifo() reads with plain read(2): no stdio buffer hides bytes from poll.
    state$in_con <- open_or_fail(function() fifo(in_path, open = "rb", blocking = TRUE), in_path)
    out_path <- paste0("/dev/fd/", out_fd)
    state$out_con <- open_or_fail(function() file(out_path, open = "wb", raw = TRUE), out_path)
    # On Linux, opening /dev/fd/N makes a new open file description, so this
    # one can be non-blocking while the other blocks. Elsewhere it would be
    # the same description: no polling there, and no cancel during a call.
    if (identical(Sys.info()[["sysname"]], "Linux")) {
      state$poll_con <- tryCatch(suppressWarnings(fifo(in_path, open = "rb", blocking = FALSE)), error = function(e) NULL)
    }
  }

  open_or_fail <- function(opener, what) {
    reason <- NULL
    con <- tryCatch(
      withCallingHandlers(opener(), warning = function(w) {
        reason <<- conditionMessage(w)
        tryInvokeRestart("muffleWarning")
      }),
      error = function(e) NULL
    )
    if (is.null(con)) fail_start(sprintf("cannot open %s: %s", what, if (is.null(reason)) "unknown error" else reason))
    con
  }

  next_message <- function() {
    if (length(state$queue)) {
      message <- state$queue[[1]]
      state$queue <- state$queue[-1]
      return(message)
    }
    header <- read_bytes(4)
    if (is.null(header)) {
      return(NULL) # end of file between frames
    }
    if (length(header) < 4) protocol_error("end of file inside a frame header")
    n <- frame_length(header)
    payload <- read_bytes(n)
    if (length(payload) < n) protocol_error(sprintf("end of file inside a frame of %.0f bytes", n))
    decode(payload)
  }

  frame_length <- function(header) {
    n <- sum(as.numeric(as.integer(header)) * c(16777216, 65536, 256, 1))
    if (n < 2 || n > MAX_FRAME) protocol_error(sprintf("frame length %.0f is outside 2..%.0f", n, MAX_FRAME))
    n
  }

  # read_bytes reads n bytes, taking first what a poll left in the buffer.
  # It returns NULL at end of file before the first byte, fewer than n bytes
  # at end of file later.
  read_bytes <- function(n) {
    out <- raw(n)
    got <- min(n, length(state$inbuf))
    if (got > 0) {
      out[seq_len(got)] <- state$inbuf[seq_len(got)]
      state$inbuf <- state$inbuf[-seq_len(got)]
    }
    while (got < n) {
      chunk <- tryCatch(readBin(state$in_con, "raw", min(n - got, 1048576)), error = function(e) {
        protocol_error(paste0("reading the pipe: ", conditionMessage(e)))
      })
      if (!length(chunk)) {
        return(if (got == 0) NULL else out[seq_len(got)])
      }
      out[got + seq_along(chunk)] <- chunk
      got <- got + length(chunk)
    }
    out
  }

  decode <- function(payload) {
    if (any(payload == as.raw(0))) protocol_error("a message holds a NUL byte")
    txt <- rawToChar(payload)
    Encoding(txt) <- "UTF-8"
    if (!validUTF8(txt)) protocol_error("a message is not UTF-8")
    message <- tryCatch(jsonlite::parse_json(txt, simplifyVector = FALSE), error = function(e) e)
    if (inherits(message, "error")) {
      id <- call_id(txt)
      if (is.null(id)) protocol_error(paste0("bad message: ", conditionMessage(message)))
      # JSON that nexus sent but jsonlite cannot read fails the call, not the pool.
      return(list(type = "call", id = id, mid = NA, args = list(), .error = paste0("the arguments cannot be read in R: ", conditionMessage(message))))
    }
    type <- if (is.list(message) && !is.null(names(message))) message[["type"]]
    if (!is.character(type) || length(type) != 1) protocol_error("a message is not an object with a type")
    if (type == "call") {
      id <- message[["id"]]
      if (is.double(id) && length(id) == 1 && isTRUE(abs(id) >= 9007199254740992)) {
        # Beyond 2^53 the double may not be the id: keep its text to echo it exactly.
        exact <- tryCatch(jsonlite::parse_json(txt, bigint_as_char = TRUE)[["id"]], error = function(e) NULL)
        if (is.character(exact) && length(exact) == 1) message[[".id_text"]] <- exact
      }
      message[[".error"]] <- check_call_text(txt, message[[".id_text"]])
    }
    message
  }

  # call_id finds the id of a call whose JSON jsonlite refused.
  call_id <- function(txt) {
    if (!grepl('^\\s*\\{\\s*"type"\\s*:\\s*"call"', txt, perl = TRUE)) {
      return(NULL)
    }
    found <- regmatches(txt, regexec('"id"\\s*:\\s*([0-9]{1,15})[,}\\s]', txt, perl = TRUE))[[1]]
    if (length(found) < 2) NULL else as.numeric(found[2])
  }

  send <- function(payload) {
    bytes <- charToRaw(enc2utf8(payload))
    n <- length(bytes)
    header <- as.raw(c(n %/% 16777216, n %/% 65536 %% 256, n %/% 256 %% 256, n %% 256))
    written <- tryCatch(
      {
        writeBin(header, state$out_con)
        writeBin(bytes, state$out_con)
        flush(state$out_con)
        TRUE
      },
      error = function(e) FALSE,
      warning = function(w) FALSE
    )
    if (!written) leave() # nexus is gone: so are we
    invisible(NULL)
  }

  protocol_error <- function(what) {
    cat("nexus pool: protocol error: ", what, "\n", sep = "", file = stderr())
    exit(2)
  }

  fail_start <- function(what) {
    cat("nexus pool: ", what, "\n", sep = "", file = stderr())
    exit(2)
  }

  exit <- function(status) {
    quit(save = "no", status = status, runLast = FALSE)
  }

  # leave exits when nexus is gone, killing the process group first if this
  # process leads it (as under nexus): children started by functions, with
  # system("... &") say, would outlive nexus otherwise. R cannot catch
  # SIGTERM, so this happens only at end of file on fd 3.
  leave <- function() {
    pid <- Sys.getpid()
    if (identical(process_group(), pid)) {
      # tools::pskill refuses group ids; kill(1) takes them. This process goes too.
      try(system(sprintf("kill -s KILL -- -%d", pid), ignore.stdout = TRUE, ignore.stderr = TRUE), silent = TRUE)
    }
    exit(0)
  }

  process_group <- function() {
    stat <- tryCatch(readLines("/proc/self/stat", warn = FALSE), error = function(e) NULL, warning = function(w) NULL)
    if (length(stat) == 1) {
      fields <- strsplit(sub("^.*\\) ", "", stat), " ")[[1]] # after "pid (command) ": state, ppid, pgrp
      return(suppressWarnings(as.integer(fields[3])))
    }
    out <- tryCatch(suppressWarnings(system2("ps", c("-o", "pgid=", "-p", Sys.getpid()), stdout = TRUE, stderr = FALSE)), error = function(e) "")
    suppressWarnings(as.integer(trimws(out[1])))
  }
})
