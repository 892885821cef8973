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
# (docs/internals.md in the nexus repository; docs/pools.md shows R pools)
# and returns the results to its clients. The runtime needs base R and the
# jsonlite package only. It runs one call at a time: nexus gets parallelism
# by starting several worker processes.
#
# Public functions: nexus_serve, nexus_progress, nexus_log, nexus_cancelled,
# nexus_sleep, and nexus_elicit, nexus_sample, nexus_roots, which ask the
# client. Everything else lives in a private environment.

if (!requireNamespace("jsonlite", quietly = TRUE)) {
  stop("the nexus R runtime needs the jsonlite package (Debian: apt install r-cran-jsonlite)")
}

nexus_serve <- nexus_progress <- nexus_log <- nexus_cancelled <- nexus_sleep <- NULL
nexus_elicit <- nexus_sample <- nexus_roots <- NULL

local({
  PROTOCOL <- 2L
  MAX_FRAME <- 1073741824 # 1 GiB
  POLL_EVERY <- 0.02 # seconds between looks at fd 3 from inside a call
  # readBin() reads a raw vector in blocks of 8096 bytes, one read(2) each,
  # until a block comes short. Asking for at most READ_CHUNK bytes is one
  # read(2), which returns what the pipe holds: it neither waits for more
  # nor (non-blocking) fails after taking bytes. More is asked only of bytes
  # certain to come, the rest of a large frame, up to BIG_READ at a time.
  READ_CHUNK <- 4096L
  BIG_READ <- 1048576L
  MIN_ARRAY <- 256L # smaller results go as JSON, which costs less for them
  PIECE <- 131072L # elements an array result is written in at a time (1 MiB of f8)
  BULK_MIN <- 8L # lists this long are written as JSON in bulk
  TWO53 <- 9007199254740992 # doubles hold every integer up to here
  STRING_RE <- '"[^"\\\\]*+(?:\\\\.[^"\\\\]*+)*+"' # a JSON string, escapes included

  state <- new.env(parent = emptyenv())
  state$serving <- FALSE
  state$in_con <- NULL # blocking reads of fd 3
  state$poll_con <- NULL # non-blocking reads of fd 3, to see cancel during a call
  state$out_con <- NULL # fd 4
  # Bytes read from fd 3 and not yet taken as frames: rbuf after rpos, then
  # the nmore chunks in rmore, keyed 1..nmore (an environment: a list in
  # state is copied whole on every change); rlen counts them all. need is
  # how many more bytes the frame at the front still lacks.
  state$rbuf <- raw(0)
  state$rpos <- 0L
  state$rmore <- new.env(parent = emptyenv())
  state$nmore <- 0L
  state$rlen <- 0
  state$need <- 0
  state$blobs <- list() # blobs read, waiting for the message they belong to
  # Whole messages read ahead, not yet handled, in order: an environment
  # keyed by qhead..qtail - 1, since a list in state would be copied on
  # every change.
  state$queue <- new.env(parent = emptyenv())
  state$qhead <- 1L
  state$qtail <- 1L
  state$current <- NULL # the call running now: list(id_json, progress, cancelled, ...)
  state$last_poll <- 0 # when fd 3 was last seen empty
  state$drained <- FALSE # the read that brought the current message emptied fd 3
  # What the serving loop is doing, so that a condition ending it can be
  # answered: idle, read, parse, user (the function runs), encode, send.
  state$phase <- "idle"
  state$calls <- NULL # the stack at the user's error, for its traceback
  state$user_call <- NULL # the call of the user's function, where its traceback starts
  state$parsing <- NULL # the text being parsed in phase parse
  state$reply <- NULL # a frame the loop sends when it starts again
  state$suspect <- FALSE # as_r saw a number from 2^53 up: check the text
  state$value_error <- NULL # why as_r could not convert an argument
  state$asked <- 0 # asks sent: the last ask number
  state$waiting <- NULL # the number of the ask waiting for its answer
  state$answer <- NULL # its answer, once read

  # --- public API ------------------------------------------------------------

  nexus_serve <<- function(table) {
    table <- check_table(table, substitute(table))
    options(warn = 1) # a warning outside a call would otherwise wait for a top level that never comes
    open_descriptors()
    state$serving <- TRUE
    mids <- sort(as.numeric(names(table)))
    state$reply <- paste0(
      '{"type":"ready","protocol":', PROTOCOL, ',"lang":"r","pid":', Sys.getpid(),
      ',"mids":[', paste(sprintf("%.0f", mids), collapse = ","), '],"concurrent":false,"arrays":["i4","f8"]}'
    )
    # The handlers are set up once, around the loop, not around each call:
    # they would cost more than a small call. A condition ends the loop; it
    # is answered and the loop starts again.
    repeat {
      outcome <- tryCatch(
        withCallingHandlers(
          withCallingHandlers(serve(table), warning = on_warning),
          error = function(e) if (identical(state$phase, "user")) state$calls <- sys.calls()
        ),
        nexus_cancelled = function(c) c,
        interrupt = function(c) c,
        error = function(e) e
      )
      settle(outcome)
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

  nexus_elicit <<- function(message, schema, key = NULL) {
    text <- json_strings(paste(as.character(message), collapse = "\n"))
    natural(ask("elicit", paste0('{"message":', text, ',"requestedSchema":', schema_json(schema), "}"), "nexus_elicit", key))
  }

  nexus_sample <<- function(prompt, max_tokens = 1000, system = NULL, key = NULL) {
    if (!is.numeric(max_tokens) || length(max_tokens) != 1 || is.na(max_tokens) || max_tokens < 1 || max_tokens != trunc(max_tokens)) {
      stop("nexus_sample: max_tokens must be one positive whole number", call. = FALSE)
    }
    params <- paste0('{"messages":', sample_messages(prompt), ',"maxTokens":', sprintf("%.0f", max_tokens))
    if (!is.null(system)) params <- paste0(params, ',"systemPrompt":', json_strings(paste(as.character(system), collapse = "\n")))
    reply_text(ask("sample", paste0(params, "}"), "nexus_sample", key))
  }

  nexus_roots <<- function(key = NULL) {
    roots <- ask("roots", "{}", "nexus_roots", key)[["roots"]]
    if (!is.list(roots) || !is.null(names(roots))) stop(ask_error("nexus_roots: the client's answer holds no list of roots"))
    lapply(roots, natural)
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
    entries <- lapply(seq_along(table), function(i) {
      list(fn = table[[i]], name = fnames[i], shapes = new.env(parent = emptyenv()))
    })
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

  serve <- function(table) {
    if (!is.null(state$reply)) {
      reply <- state$reply
      state$reply <- NULL
      send(reply)
    }
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

  # settle answers the condition that ended the serving loop, by what the
  # loop was doing when it came.
  settle <- function(c) {
    phase <- state$phase
    state$phase <- "idle"
    call <- state$current
    state$current <- NULL
    calls <- state$calls
    state$calls <- NULL
    if (phase == "send") {
      # fd 4 is broken, so nexus is gone; if not, say what went wrong, which
      # nexus shows with the pool's end.
      try(cat("nexus pool: sending a reply failed: ", conditionMessage(c), "\n", sep = "", file = stderr()), silent = TRUE)
      leave()
    }
    if (phase == "read") protocol_error(paste0("reading the pipe: ", conditionMessage(c)))
    if (phase == "parse") {
      txt <- state$parsing
      state$parsing <- NULL
      state$qhead <- state$qhead - 1L # it goes first: it came first
      assign(as.character(state$qhead), unreadable(txt, c), envir = state$queue)
      return(invisible(NULL))
    }
    if (!is.null(call) && phase %in% c("user", "encode")) {
      state$reply <- if (!inherits(c, "error")) {
        cancelled_payload(call$id_json)
      } else if (phase == "user") {
        error_payload(call$id_json, error_message(c), traceback_text(c, calls, state$user_call))
      } else {
        error_payload(call$id_json, paste0("cannot encode the result as JSON: ", conditionMessage(c)))
      }
      return(invisible(NULL))
    }
    if (inherits(c, "interrupt")) {
      return(invisible(NULL)) # between calls: nothing to stop
    }
    stop(c) # a fault of this runtime: R reports it and the pool ends
  }

  run_call <- function(table, message) {
    id_json <- message[[".id_json"]]
    state$current <- list(
      id_json = id_json, id = message[["id"]], progress = isTRUE(message[["progress"]]),
      cancelled = isTRUE(message[[".cancelled"]])
    )
    # A cancel for this call may be waiting behind it: in what was read
    # with it, or in fd 3 unless the read that brought it found fd 3 empty.
    if (state$drained) handle_buffered() else poll()
    if (state$current$cancelled) {
      state$current <- NULL
      return(send(cancelled_payload(id_json)))
    }
    if (!is.null(message[[".error"]])) {
      state$current <- NULL
      return(send(error_payload(id_json, message[[".error"]])))
    }
    mid <- message[["mid"]]
    entry <- if (is.numeric(mid) && length(mid) == 1 && !is.na(mid) && mid == trunc(mid)) table[[format_integer(mid)]]
    if (is.null(entry)) {
      state$current <- NULL
      mids <- sprintf("%.0f", sort(as.numeric(names(table))))
      shown <- if (is.numeric(mid) && length(mid) == 1) format_number(mid) else gsub("\n", " ", json_encode(mid))
      return(send(error_payload(id_json, sprintf("unknown mid %s (this pool has %s)", shown, paste(mids, collapse = ", ")))))
    }
    state$returns <- message[[".returns"]] # the declared return type, for result_reply
    invoke(entry, message[["args"]], id_json, message[[".box"]])
  }

  # invoke applies the function to args and sends the reply. The call is
  # built from symbols bound in a fresh environment, so that tracebacks and
  # warnings show fighterDamage(ac), not the data itself. Errors and
  # cancellation end the serving loop, whose handlers answer them (settle).
  invoke <- function(entry, args, id_json, box) {
    shape <- call_shape(entry, length(args))
    env <- new.env(parent = globalenv())
    assign(entry$name, entry$fn, envir = env)
    symbols <- shape$symbols
    for (i in seq_along(args)) assign(symbols[i], args[[i]], envir = env)
    state$user_call <- shape$call
    state$calls <- NULL
    state$phase <- "user"
    value <- eval(shape$call, env)
    state$phase <- "encode"
    reply <- result_reply(id_json, value, box)
    state$phase <- "idle"
    state$current <- NULL
    send(reply$payload, reply$array)
  }

  # call_shape is the symbols and the call for n arguments, made once.
  call_shape <- function(entry, n) {
    key <- as.character(n)
    shape <- entry$shapes[[key]]
    if (is.null(shape)) {
      symbols <- argument_symbols(entry$fn, n, entry$name)
      shape <- list(symbols = symbols, call = as.call(c(as.name(entry$name), lapply(symbols, as.name))))
      assign(key, shape, envir = entry$shapes)
    }
    shape
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
    if (identical(state$phase, "send")) leave() # writing fd 4 failed: nexus is gone
    text <- conditionMessage(w)
    # R integers are 32-bit: an overflow makes NA, which would reach the
    # client as null. A failed call is better than a wrong value.
    if (identical(state$phase, "user") && grepl("integer overflow", text, fixed = TRUE)) {
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
    start <- if (is.null(calls) || is.null(user_call)) NA else Position(function(c) identical(c, user_call), calls)
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

  # result_reply encodes a function's value: the result message, and the
  # array sent before it when the value goes as one (see as_array).
  result_reply <- function(id_json, value, box) {
    if (box > 0L) {
      array <- as_array(value, box)
      if (!is.null(array)) {
        payload <- paste0(
          '{"type":"result","id":', id_json, ',"value":null,"arrays":[{"path":[],"dtype":"', array$dtype,
          '","shape":[', paste(sprintf("%.0f", array$shape), collapse = ","), "]}]}"
        )
        return(list(payload = payload, array = array))
      }
    }
    returns <- state$returns
    text <- if (box > 0L || is.null(returns)) json_encode(value, box) else typed_json(value, returns)
    payload <- paste0('{"type":"result","id":', id_json, ',"value":', text, "}")
    size <- nchar(payload, type = "bytes")
    if (size > MAX_FRAME) {
      payload <- error_payload(id_json, sprintf("the result takes %.0f bytes, over the %d MiB frame limit", size, MAX_FRAME %/% 1048576))
    }
    list(payload = payload, array = NULL)
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
    for (k in seq_len(state$qtail - state$qhead)) {
      key <- as.character(state$qhead + k - 1L)
      queued <- get(key, envir = state$queue)
      if (identical(queued[["type"]], "call") && isTRUE(queued[["id"]] == id)) {
        queued[[".cancelled"]] <- TRUE
        assign(key, queued, envir = state$queue)
      }
    }
    invisible(NULL)
  }

  # poll reads what fd 3 holds without waiting: a cancel for the running
  # call, or shutdown, must be seen before the call ends. Calls that arrive
  # meanwhile wait in the queue, in order. Unless forced it looks at most
  # every POLL_EVERY seconds, counting reads that found fd 3 empty.
  poll <- function(force = FALSE) {
    if (is.null(state$poll_con)) {
      return(handle_buffered())
    }
    t <- now()
    if (!force && t - state$last_poll < POLL_EVERY) {
      return(invisible(NULL))
    }
    state$last_poll <- t
    repeat {
      chunk <- tryCatch(readBin(state$poll_con, "raw", READ_CHUNK), error = function(e) NULL) # EAGAIN: nothing waiting
      if (is.null(chunk)) break
      if (length(chunk) == 0) leave() # end of file without shutdown: nexus is gone
      add_bytes(chunk)
      if (length(chunk) < READ_CHUNK) break
    }
    handle_buffered()
  }

  # handle_buffered acts on the whole frames read so far: shutdown, cancel,
  # and calls, which wait in the queue.
  handle_buffered <- function() {
    while (state$rlen >= 4) {
      frame <- buffered_frame()
      if (is.null(frame)) break
      message <- take(frame, guarded = TRUE)
      if (is.null(message)) next
      switch(message[["type"]],
        shutdown = exit(0),
        cancel = mark_cancelled(message[["id"]]),
        answer = take_answer(message),
        call = {
          assign(as.character(state$qtail), message, envir = state$queue)
          state$qtail <- state$qtail + 1L
        },
        NULL
      )
    }
    invisible(NULL)
  }

  now <- function() proc.time()[["elapsed"]]

  # --- asks ------------------------------------------------------------------

  # ask sends an ask for the current call and reads fd 3 until its answer
  # comes, as the serving loop would: a cancel for the call ends the wait
  # (nexus_cancelled), shutdown exits, calls wait in the queue. It returns
  # the answer's result, parsed but not converted.
  ask <- function(kind, params, fname, key = NULL) {
    if (!is.null(key) && (!is.character(key) || length(key) != 1 || is.na(key))) {
      stop(paste0(fname, ": key must be one string"), call. = FALSE)
    }
    call <- state$current
    if (is.null(call) || !state$serving) {
      stop(ask_error(paste0(fname, ": not in a call: only a function nexus runs can ask the client")))
    }
    check_cancel(force = TRUE)
    state$asked <- state$asked + 1
    n <- state$asked
    state$waiting <- n
    state$answer <- NULL
    on.exit(state$waiting <- NULL)
    key_json <- if (is.null(key)) "" else paste0(',"key":', json_strings(key))
    send(paste0('{"type":"ask","id":', call$id_json, ',"ask":', sprintf("%.0f", n), ',"kind":"', kind, '"', key_json, ',"params":', params, "}"))
    repeat {
      handle_buffered()
      check_cancel()
      if (!is.null(state$answer)) break
      chunk <- tryCatch(readBin(state$in_con, "raw", read_size()), error = function(e) protocol_error(paste0("reading the pipe: ", conditionMessage(e))))
      if (!length(chunk)) leave() # end of file without shutdown: nexus is gone
      add_bytes(chunk)
    }
    answer <- state$answer
    state$answer <- NULL
    if (!is.null(answer[["error"]])) stop(ask_error(paste(as.character(answer[["error"]]), collapse = "\n")))
    result <- answer[["result"]]
    if (!is.list(result)) stop(ask_error(paste0(fname, ": nexus answered without a result")))
    result
  }

  # take_answer keeps the answer the running call waits for; others are late.
  take_answer <- function(message) {
    if (!is.null(state$waiting) && !is.null(state$current) &&
      isTRUE(message[["id"]] == state$current$id) && isTRUE(message[["ask"]] == state$waiting)) {
      state$answer <- message
    }
    invisible(NULL)
  }

  # ask_error is the condition an ask signals when the client gives no answer.
  ask_error <- function(text) structure(class = c("nexus_ask_error", "error", "condition"), list(message = text, call = NULL))

  # natural converts a parsed answer as arguments are: vectors, named lists.
  natural <- function(x) {
    suspect <- state$suspect
    value_error <- state$value_error
    on.exit({
      state$suspect <- suspect
      state$value_error <- value_error
    })
    as_r(x)
  }

  # schema_json is a schema given as a list, or as JSON text, as JSON text.
  schema_json <- function(schema) {
    if (is.character(schema) && length(schema) == 1 && !is.na(schema)) {
      if (!isTRUE(jsonlite::validate(schema))) stop("nexus_elicit: schema is not valid JSON text", call. = FALSE)
      return(as.character(schema))
    }
    if (!is.list(schema)) stop("nexus_elicit: schema must be a named list or JSON text (a JSON Schema object)", call. = FALSE)
    json_encode(schema)
  }

  sample_messages <- function(prompt) {
    if (is.character(prompt) && length(prompt) == 1 && !is.na(prompt)) prompt <- list(list(role = "user", content = prompt))
    if (!is.list(prompt) || !length(prompt) || !is.null(names(prompt))) {
      stop("nexus_sample: prompt must be a string or an unnamed list of messages, list(role = \"user\", content = \"...\")", call. = FALSE)
    }
    parts <- vapply(seq_along(prompt), function(i) {
      m <- prompt[[i]]
      role <- if (is.list(m)) m[["role"]]
      content <- if (is.list(m)) m[["content"]]
      if (!is.character(role) || length(role) != 1 || is.null(content)) {
        stop(sprintf("nexus_sample: message %d is not list(role = \"user\" or \"assistant\", content = ...)", i), call. = FALSE)
      }
      block <- if (is.character(content) && length(content) == 1) {
        paste0('{"type":"text","text":', json_strings(content), "}")
      } else if (is.list(content)) {
        json_encode(content)
      } else {
        stop(sprintf("nexus_sample: message %d: content must be a string or a content block (a named list)", i), call. = FALSE)
      }
      paste0('{"role":', json_strings(role), ',"content":', block, "}")
    }, "")
    paste0("[", paste(parts, collapse = ","), "]")
  }

  # reply_text is the text of a sampling result: its text block, or its
  # text blocks joined.
  reply_text <- function(result) {
    content <- result[["content"]]
    blocks <- if (is.list(content) && is.null(names(content))) content else list(content)
    texts <- character(0)
    kinds <- character(0)
    for (b in blocks) {
      type <- if (is.list(b)) b[["type"]]
      kinds <- c(kinds, if (is.character(type)) type else "?")
      if (identical(type, "text") && is.character(b[["text"]])) texts <- c(texts, b[["text"]])
    }
    if (!length(texts)) stop(ask_error(paste0("nexus_sample: the model's reply holds no text (content: ", paste(kinds, collapse = ", "), ")")))
    paste(texts, collapse = "")
  }

  # --- values: JSON to R ---------------------------------------------------

  # as_r turns a parsed JSON value (jsonlite, simplifyVector = FALSE) into a
  # natural R value: an array of scalars of one type (numbers count as one
  # type) becomes an atomic vector, with NA for null; other arrays become
  # unnamed lists; objects become named lists; [] becomes logical(0). An
  # array that came as a blob is already an R value (place_arrays). What
  # cannot be converted is recorded in state$value_error, and numbers from
  # 2^53 up set state$suspect: the call's text says whether they are exact.
  as_r <- function(x) {
    if (!is.list(x)) {
      if (is.double(x) && isTRUE(abs(x) >= TWO53)) {
        state$suspect <- TRUE
        if (is.infinite(x)) out_of_range()
      }
      return(x)
    }
    if (is.object(x)) {
      return(x[[1L]])
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
    # All scalars and nulls unlist to an atomic vector in one step; a list
    # or object among them makes a list instead.
    u <- unlist(x, recursive = FALSE, use.names = FALSE)
    # NaN and the infinities, which came as arrays of rank 0, are numbers
    # among the others (and no sign of a number out of range).
    scalar <- FALSE
    if (is.list(u)) {
      scalar <- vapply(x, inherits, NA, "nexus_scalar")
      if (any(scalar)) {
        x[scalar] <- lapply(x[scalar], `[[`, 1L)
        u <- unlist(x, recursive = FALSE, use.names = FALSE)
      }
    }
    if (!is.null(u) && is.atomic(u) && !mixed(x, typeof(u))) {
      out <- u
      if (length(u) < n) {
        nulls <- lengths(x) == 0L
        out <- vector(typeof(u), n)
        out[!nulls] <- u
        out[nulls] <- NA
      }
      if (is.double(out)) {
        big <- abs(out) >= TWO53 & !scalar
        if (any(big, na.rm = TRUE)) {
          state$suspect <- TRUE
          if (any(is.infinite(out) & !scalar)) out_of_range()
        }
      }
      return(out)
    }
    rows <- if (is.list(u)) rows_r(x, u)
    if (!is.null(rows)) {
      return(rows)
    }
    lapply(x, as_r)
  }

  # rows_r converts a list of arrays of scalars (rows of numbers, say) in a
  # few vectorised steps into what as_r makes of each row; cells is every
  # row's elements in one list. NULL when x is not such a list, or a row
  # holds null or types that stay a list: then as_r takes each row.
  rows_r <- function(x, cells) {
    n <- length(x)
    if (n < BULK_MIN || !all(vapply(x, function(e) is.list(e) && is.null(names(e)) && !is.object(e), NA))) {
      return(NULL)
    }
    u <- unlist(cells, recursive = FALSE, use.names = FALSE)
    if (is.null(u) || !is.atomic(u) || length(u) != length(cells) || mixed(x, typeof(u))) {
      return(NULL)
    }
    lens <- lengths(x)
    rows <- unname(split(u, groups_of(lens)))
    if (any(lens == 0L)) rows[lens == 0L] <- list(logical(0))
    if (is.double(u)) {
      # A row of integers only is an integer vector, as as_r makes it.
      ints <- vapply(cells, is.integer, NA)
      if (any(ints)) {
        whole <- which(lens > 0L & tabulate(rep.int(seq_len(n), lens)[ints], n) == lens)
        rows[whole] <- lapply(rows[whole], as.integer)
      }
      if (any(abs(u) >= TWO53)) {
        state$suspect <- TRUE
        if (any(is.infinite(u))) out_of_range()
      }
    }
    rows
  }

  # mixed says whether a list of scalars holds types that unlist coerced
  # into typeof_u: those stay a list ([1, "a"]); numbers are one type.
  mixed <- function(x, typeof_u) {
    classes <- switch(typeof_u,
      logical = return(FALSE),
      integer = ,
      double = "logical",
      character = c("logical", "integer", "numeric"), # rapply matches 1L as "integer" only
      return(TRUE)
    )
    length(rapply(x, function(e) TRUE, classes = classes, how = "unlist")) > 0L
  }

  value_error <- function(text) {
    if (is.null(state$value_error)) state$value_error <- text
    invisible(NULL)
  }

  out_of_range <- function() value_error("a number in the arguments is beyond the range of R numbers (about 1.8e308)")

  # text_error finds what jsonlite would silently change in a call: U+0000
  # in strings (cut off) and, when as_r saw numbers from 2^53 up, integers
  # that no double holds exactly (9007199254740993 would become ...992). It
  # returns the error message, or NULL.
  text_error <- function(txt, id_text, suspect) {
    if (grepl("\\u0000", txt, fixed = TRUE) && grepl("(?<!\\\\)(?:\\\\\\\\)*\\\\u0000", txt, perl = TRUE)) {
      return("a string in the arguments holds the character U+0000, which R strings cannot hold")
    }
    if (!suspect || !grepl("[0-9]{16}", txt, perl = TRUE)) {
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

  # --- values: arrays to R ---------------------------------------------------

  # place_arrays puts each array of a call into its arguments at its path,
  # where the JSON holds null, wrapped so that as_r takes it as it is. An
  # array of rank 0 (a NaN or an infinity where a Real is declared) is
  # marked nexus_scalar too: among other numbers in a list it is one of
  # them (as_r).
  place_arrays <- function(descs, blobs, args, id_json) {
    if (is.null(descs)) descs <- list()
    if (!is.list(descs) || !is.null(names(descs))) protocol_error(sprintf("call %s: arrays is not a list", id_json))
    if (length(descs) != length(blobs)) {
      protocol_error(sprintf("call %s describes %d arrays, but %d blobs came before it", id_json, length(descs), length(blobs)))
    }
    for (i in seq_along(descs)) {
      d <- descs[[i]]
      what <- sprintf("call %s, array %d", id_json, i)
      if (!is.list(d) || is.null(names(d))) protocol_error(paste0(what, ": not an object"))
      path <- d[["path"]]
      if (!is.list(path) || !length(path) || !is.null(names(path))) protocol_error(paste0(what, ": path is not a list of at least one index"))
      value <- array_value(d, blobs[[i]], what)
      class <- if (is.list(d[["shape"]]) && !length(d[["shape"]])) c("nexus_scalar", "nexus_array") else "nexus_array"
      args <- place(args, path, structure(list(value), class = class), what)
    }
    args
  }

  place <- function(x, path, value, what) {
    if (!length(path)) {
      if (!is.null(x)) protocol_error(paste0(what, ": its place in the arguments is not null"))
      return(value)
    }
    key <- path[[1L]]
    if (is.character(key) && length(key) == 1L) {
      key <- if (is.list(x) && !is.null(names(x))) match(key, names(x)) else NA
    } else if (is.numeric(key) && length(key) == 1L && !is.na(key) && key >= 0 && key == trunc(key) && is.list(x) && is.null(names(x)) && key < length(x)) {
      key <- key + 1
    } else {
      key <- NA
    }
    if (is.na(key)) protocol_error(paste0(what, ": its path leads nowhere in the arguments"))
    x[[key]] <- place(x[[key]], path[-1L], value, what)
    x
  }

  # array_value is the R value of one array: exactly what as_r makes of the
  # same numbers as JSON, a vector for rank 1 and nested lists of vectors
  # for higher ranks.
  array_value <- function(d, blob, what) {
    dtype <- d[["dtype"]]
    size <- if (identical(dtype, "i4")) 4L else if (identical(dtype, "f8")) 8L else 0L
    if (!size) protocol_error(paste0(what, ": dtype ", gsub("\n", " ", json_encode(dtype)), " is not one this pool takes (i4, f8)"))
    shape <- d[["shape"]]
    # shape [] (rank 0) is one number: how a NaN or an infinity comes as an argument
    ok <- is.list(shape) && is.null(names(shape)) &&
      all(vapply(shape, function(s) is.numeric(s) && length(s) == 1L && !is.na(s) && s >= 0 && s == trunc(s), NA))
    if (!ok) protocol_error(paste0(what, ": shape is not a list of lengths"))
    dims <- as.numeric(unlist(shape))
    n <- prod(dims)
    if (length(blob) != n * size) {
      protocol_error(sprintf("%s: shape [%s] of %s needs %.0f bytes, but its blob has %.0f", what, paste(sprintf("%.0f", dims), collapse = ","), dtype, n * size, length(blob)))
    }
    v <- if (size == 4L) readBin(blob, "integer", n, size = 4L, endian = "little") else readBin(blob, "double", n, size = 8L, endian = "little")
    if (!length(dims)) {
      return(v)
    }
    nest(v, dims)
  }

  # nest makes the nested lists of a shape from its elements, row-major.
  nest <- function(v, dims) {
    k <- length(dims)
    zero <- match(0, dims)
    if (!is.na(zero)) {
      # Lists down to the first empty level; there each is [], logical(0).
      if (zero == 1L) {
        return(logical(0))
      }
      outer <- dims[seq_len(zero - 1L)]
      return(group(rep(list(logical(0)), prod(outer)), outer))
    }
    if (k == 1L) {
      return(leaf(v))
    }
    width <- dims[k]
    rows <- length(v) / width
    leaves <- if (rows == 1) list(v) else unname(split(v, groups_of(rep.int(width, rows))))
    if (is.integer(v) && anyNA(v)) {
      for (r in unique((which(is.na(v)) - 1) %/% width + 1)) leaves[[r]] <- leaf(leaves[[r]])
    }
    group(leaves, dims[-k])
  }

  # leaf is one innermost vector. An i4 of -2^31 reads as NA_integer_; as
  # JSON that number arrives as a double, and so does its vector here.
  leaf <- function(v) {
    if (is.integer(v) && anyNA(v)) {
      out <- as.double(v)
      out[is.na(v)] <- -2147483648
      return(out)
    }
    v
  }

  # group nests items (the innermost lists, in order) by dims.
  group <- function(items, dims) {
    k <- length(dims)
    if (k == 1L) {
      return(items)
    }
    group(unname(split(items, groups_of(rep.int(dims[k], length(items) / dims[k])))), dims[-k])
  }

  # groups_of is the factor that split() needs to cut items into runs of
  # lens, made directly rather than by as.factor().
  groups_of <- function(lens) {
    structure(rep.int(seq_along(lens), lens), levels = as.character(seq_along(lens)), class = "factor")
  }

  # --- values: R to arrays ---------------------------------------------------

  # as_array is a result as one array, when the call's declared return type
  # is rank nested lists of numbers and the value is a numeric vector (rank
  # 1), a numeric matrix or a list of numeric vectors of one length (rank
  # 2), of MIN_ARRAY elements or more, and without NA, NaN or infinities
  # (JSON says what those do). Otherwise NULL: the result goes as JSON.
  as_array <- function(x, rank) {
    if (rank == 1L) {
      if (!plain_numbers(x) || is.array(x) || length(x) < MIN_ARRAY || !all_finite(x)) {
        return(NULL)
      }
      return(array_of(x, length(x)))
    }
    if (rank != 2L) {
      return(NULL)
    }
    if (is.matrix(x)) {
      if (!plain_numbers(x) || length(x) < MIN_ARRAY || !all_finite(x)) {
        return(NULL)
      }
      return(array_of(as.vector(t(x)), dim(x))) # rows first
    }
    if (!is.list(x) || is.object(x) || !is.null(names(x)) || !length(x)) {
      return(NULL)
    }
    lens <- lengths(x)
    width <- lens[1]
    if (width == 0L || any(lens != width) || length(x) * width < MIN_ARRAY) {
      return(NULL)
    }
    if (!all(vapply(x, plain_numbers, NA)) || any(vapply(x, is.array, NA))) {
      return(NULL)
    }
    if (anyNA(x, recursive = TRUE) || !rows_finite(x)) {
      return(NULL)
    }
    array_of(x, c(length(x), width)) # the rows, joined only a block at a time as they are sent
  }

  plain_numbers <- function(x) is.numeric(x) && !isS4(x)

  # all_finite is all(is.finite(x)) without a logical vector as long as x
  # (fresh memory is costly): no NA or NaN, and for doubles a finite sum,
  # which no infinity allows; a sum that overflows takes the long way.
  all_finite <- function(x) {
    if (anyNA(x)) {
      return(FALSE)
    }
    is.integer(x) || is.finite(sum(x)) || all(is.finite(x))
  }

  # rows_finite is all_finite for a list of numeric rows without NA.
  rows_finite <- function(x) {
    doubles <- x[vapply(x, is.double, NA)]
    is.finite(sum(vapply(doubles, sum, 0))) || all(vapply(doubles, function(r) all(is.finite(r)), NA))
  }

  # array_of is the array of data; NULL when its blob would pass the frame limit.
  # data is a numeric vector, or a list of numeric rows (integers as i4
  # when every row is integer); attributes do not matter, as write_array
  # sends it in pieces.
  array_of <- function(data, shape) {
    integer <- if (is.list(data)) all(vapply(data, is.integer, NA)) else is.integer(data)
    size <- if (integer) 4L else 8L
    if (prod(shape) * size > MAX_FRAME) {
      return(NULL)
    }
    list(data = data, dtype = if (integer) "i4" else "f8", size = size, shape = shape, bytes = prod(shape) * size)
  }

  # write_array writes an array's elements PIECE at a time: writeBin copies
  # what it writes into a buffer of its own, so one writeBin of a large
  # vector (or of the rows unlisted) would copy it whole into fresh memory,
  # which is costly. .subset drops I() and other classes without copying
  # the whole vector; writeBin takes plain vectors only.
  write_array <- function(array, con) {
    data <- array$data
    size <- array$size
    if (is.list(data)) {
      per <- max(1L, PIECE %/% length(data[[1L]]))
      for (a in seq(1, length(data), by = per)) {
        block <- unlist(.subset(data, a:min(length(data), a + per - 1)), use.names = FALSE)
        if (size == 8L) block <- as.double(block) # integer rows among double ones
        writeBin(block, con, size = size, endian = "little")
      }
    } else {
      n <- length(data)
      for (a in seq(1, n, by = PIECE)) {
        piece <- .subset(data, a:min(n, a + PIECE - 1))
        if (size == 8L) piece <- as.double(piece)
        writeBin(piece, con, size = size, endian = "little")
      }
    }
    invisible(NULL)
  }

  # --- values: R to JSON ---------------------------------------------------

  # json_encode writes an R value as JSON text. A length-1 atomic vector is a
  # scalar; wrap it in I() (or make it a list) to send a one-element array.
  # box is how many levels of lists the declared type has here (the call's
  # ret.rank, less one per level down): a vector there is always an array.
  json_encode <- function(x, box = 0L) {
    if (is.null(x)) {
      return("null")
    }
    if (box < 1L && length(x) == 1L && is.null(attributes(x))) {
      # A plain scalar, the commonest value: the short way.
      switch(typeof(x),
        integer = return(if (is.na(x)) "null" else sprintf("%d", x)),
        double = return(json_doubles(x)),
        logical = return(if (is.na(x)) "null" else if (x) "true" else "false"),
        character = return(json_strings(x)),
        NULL
      )
    }
    boxed <- box > 0L || inherits(x, "AsIs")
    if (is.data.frame(x)) {
      return(json_rows(x))
    }
    x <- plain(x)
    if (is.list(x)) {
      return(json_list(x, box))
    }
    if (!is.atomic(x)) stop("cannot encode a value of type ", typeof(x), " as JSON")
    if (is.raw(x)) {
      return(json_strings(jsonlite::base64_enc(x))) # the protocol's form for bytes
    }
    d <- dim(x)
    if (length(d) > 2) stop("cannot encode an array of ", length(d), " dimensions as JSON")
    if ((is.integer(x) || is.logical(x)) && (length(x) != 1L || boxed || length(d) == 2)) {
      return(json_plain_array(x))
    }
    if (length(d) == 2) {
      return(json_matrix(x))
    }
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

  # typed_json writes a result by its declared type t (the call's
  # "returns": "int", "real", ..., list(list = T), list(record = list(...)),
  # docs/internals.md, "Declared types"), where R's own shapes are
  # ambiguous: a vector of length one where a list is declared is a
  # one-element list, integer(0) and character(0) are [], a named list or
  # a one-row data frame where a record is declared is an object, and a
  # list where a scalar is declared is an error. Anything it does not know
  # goes by json_encode, and nexus checks the outcome against the type.
  typed_json <- function(x, t) {
    if (is.character(t)) {
      if (identical(t, "any") || is.null(x)) {
        return(json_encode(x))
      }
      if (is.list(x)) stop(sprintf("the result is a %s where its type says %s", if (is.data.frame(x)) "data frame" else "list", type_name(t)))
      return(json_encode(x))
    }
    if (!is.list(t)) {
      return(json_encode(x))
    }
    if (!is.null(t[["opt"]])) {
      # NA is null; NaN is a number (is.na is TRUE for both)
      if (is.null(x) || is.atomic(x) && length(x) == 1L && is.na(x) && !is.nan(x)) {
        return("null")
      }
      return(typed_json(x, t[["opt"]]))
    }
    if (!is.null(t[["list"]])) {
      return(typed_list(x, t[["list"]]))
    }
    if (!is.null(t[["tuple"]])) {
      items <- t[["tuple"]]
      if (is.null(x) || is.data.frame(x)) {
        return(json_encode(x))
      }
      x <- plain(x)
      if (is.atomic(x)) x <- as.list(x)
      parts <- vapply(seq_along(x), function(i) typed_json(x[[i]], if (i <= length(items)) items[[i]] else "any"), "")
      return(paste0("[", paste(parts, collapse = ","), "]"))
    }
    if (!is.null(t[["record"]])) {
      return(typed_object(x, t[["record"]], NULL))
    }
    if (!is.null(t[["map"]])) {
      return(typed_object(x, NULL, t[["map"]]))
    }
    json_encode(x)
  }

  typed_list <- function(x, et) {
    if (is.null(x)) {
      return(json_encode(x))
    }
    if (is.data.frame(x)) {
      return(json_rows(x))
    }
    x <- plain(x)
    scalar <- is.character(et) && !identical(et, "any") || is.list(et) && is.character(et[["opt"]])
    if (is.atomic(x) && length(dim(x)) == 2L) {
      rows <- vapply(seq_len(nrow(x)), function(i) typed_json(x[i, ], et), "")
      return(paste0("[", paste(rows, collapse = ","), "]"))
    }
    if (is.atomic(x) && (scalar || !length(x))) {
      if (is.raw(x)) {
        return(json_encode(x))
      }
      return(paste0("[", paste(json_elements(x), collapse = ","), "]"))
    }
    if (is.atomic(x)) x <- as.list(x)
    if (!is.list(x)) {
      return(json_encode(x))
    }
    parts <- vapply(seq_along(x), function(i) typed_json(x[[i]], et), "", USE.NAMES = FALSE)
    paste0("[", paste(parts, collapse = ","), "]")
  }

  # typed_object writes a record (fields: their types by name) or a Map
  # (values: the type of every value) from a named list, a named vector
  # or a one-row data frame.
  typed_object <- function(x, fields, values) {
    if (is.data.frame(x)) {
      if (nrow(x) != 1L) stop(sprintf("the result is a data frame of %d rows where its type says a record", nrow(x)))
      x <- lapply(x, function(column) plain(column)[[1L]])
    }
    keys <- names(x)
    if (is.null(x) || !length(x) || is.null(keys) || !(is.list(x) || is.atomic(x))) {
      return(json_encode(x))
    }
    if (anyNA(keys) || !all(nzchar(keys))) {
      return(json_encode(x))
    }
    parts <- vapply(seq_along(x), function(i) {
      t <- if (is.null(fields)) values else fields[[keys[i]]]
      typed_json(x[[i]], if (is.null(t)) "any" else t)
    }, "", USE.NAMES = FALSE)
    paste0("{", paste(paste0(json_strings(keys), ":", parts), collapse = ","), "}")
  }

  type_name <- function(t) switch(t, int = "Int", real = "Real", bool = "Bool", str = "Str", null = "()", t)

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
  # NaN and the infinities go as the strings nexus reads where a Real is
  # declared (docs/internals.md, "Values"); NA is null.
  json_doubles <- function(x) {
    out <- rep("null", length(x))
    known <- is.finite(x)
    if (!all(known | is.na(x) & !is.nan(x))) {
      out[is.nan(x)] <- '"NaN"'
      out[!is.na(x) & x == Inf] <- '"Infinity"'
      out[!is.na(x) & x == -Inf] <- '"-Infinity"'
    }
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
  # not R's own, which may differ in the last bit. R's is within an ulp of
  # it, though, so a text R reads further than 4 ulps from x surely does not
  # read back, and needs no second look: most 15-digit texts of a double
  # that needs 17.
  reads_back <- function(text, x) {
    near <- abs(as.double(text) - x) <= abs(x) * 2^-50 | abs(x) < 1e-300
    if (any(near)) near[near] <- unlist(parse_text(paste0("[", paste(text[near], collapse = ","), "]")), use.names = FALSE) == x[near]
    near
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

  json_list <- function(x, box = 0L) {
    keys <- names(x)
    array <- is.null(keys) || (length(keys) > 0 && !any(nzchar(keys) & !is.na(keys)))
    inner <- max(box - 1L, 0L)
    body <- if (array) bulk_elements(x, inner)
    if (!is.null(body)) {
      return(paste0("[", body, "]"))
    }
    parts <- vapply(x, json_encode, "", inner, USE.NAMES = FALSE)
    if (array) {
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

  # bulk_elements writes the elements of a list of plain vectors of one
  # kind (rows of numbers, say) in a few vectorised steps, joined by
  # commas; the text is what json_encode gives element by element. It
  # returns NULL for any other list, and for one an element of which does
  # not encode: the element-wise way then gives the same error as before.
  bulk_elements <- function(x, box) {
    if (length(x) < BULK_MIN) {
      return(NULL)
    }
    kinds <- unique(vapply(x, function(e) if (is.object(e) || is.array(e)) "" else typeof(e), "", USE.NAMES = FALSE))
    numbers <- all(kinds %in% c("integer", "double"))
    if (!numbers && !(length(kinds) == 1L && kinds %in% c("logical", "character"))) {
      return(NULL)
    }
    u <- unlist(x, use.names = FALSE)
    if (is.double(u) && !all(is.finite(u)) && (any(is.nan(u)) || any(is.infinite(u)))) {
      return(NULL)
    }
    if (is.character(u) && !all(validUTF8(enc2utf8(u))[!is.na(u)])) {
      return(NULL)
    }
    # Integers among doubles are written as whole doubles: the same digits.
    cells <- if (length(u)) json_elements(u) else character(0)
    lens <- lengths(x)
    slots <- pmax(lens, 1L) # an empty element takes one slot, "[]"
    if (any(lens == 0L)) {
      empty <- rep.int(lens == 0L, slots)
      out <- character(length(empty))
      out[!empty] <- cells
      out[empty] <- "[]"
      cells <- out
    }
    ends <- cumsum(slots)
    starts <- ends - slots + 1L
    open <- lens > 0L & (lens != 1L | box >= 1L)
    cells[starts[open]] <- paste0("[", cells[starts[open]])
    cells[ends[open]] <- paste0(cells[ends[open]], "]")
    paste(cells, collapse = ",")
  }

  # json_plain_array writes an integer or logical vector or matrix (row by
  # row) through jsonlite, whose C code gives the same text as sprintf and
  # paste several times faster.
  json_plain_array <- function(x) {
    d <- dim(x)
    x <- as.vector(unclass(x)) # without names, dims or class
    if (length(d) == 2) dim(x) <- d
    as.character(jsonlite::toJSON(x, na = "null"))
  }

  json_matrix <- function(m) {
    rows <- nrow(m)
    width <- ncol(m)
    if (rows == 0L) {
      return("[]")
    }
    if (width == 0L) {
      return(paste0("[", paste(rep.int("[]", rows), collapse = ","), "]"))
    }
    cells <- json_elements(if (is.list(m)) m else as.vector(m))
    cells <- cells[as.vector(t(matrix(seq_along(cells), rows)))] # row by row
    starts <- seq.int(1L, by = width, length.out = rows)
    ends <- starts + (width - 1L)
    cells[starts] <- paste0("[", cells[starts])
    cells[ends] <- paste0(cells[ends], "]")
    paste0("[", paste(cells, collapse = ","), "]")
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
    state$drained <- FALSE
    repeat {
      if (state$qhead < state$qtail) {
        key <- as.character(state$qhead)
        message <- get(key, envir = state$queue)
        rm(list = key, envir = state$queue)
        state$qhead <- state$qhead + 1L
        return(message)
      }
      frame <- read_frame()
      if (is.null(frame)) {
        return(NULL) # end of file between frames
      }
      message <- take(frame, guarded = FALSE)
      if (!is.null(message)) {
        return(message)
      }
    }
  }

  # read_frame returns the next frame, reading fd 3 as needed, or NULL at
  # end of file between frames. It asks for a pipe's worth at a time, so
  # what nexus sent behind a frame (a cancel, say) comes in with it.
  read_frame <- function() {
    repeat {
      frame <- buffered_frame()
      if (!is.null(frame)) {
        return(frame)
      }
      want <- read_size()
      state$phase <- "read"
      chunk <- readBin(state$in_con, "raw", want)
      state$phase <- "idle"
      if (!length(chunk)) {
        if (state$rlen == 0) {
          return(NULL)
        }
        if (state$rlen < 4) protocol_error("end of file inside a frame header")
        protocol_error(sprintf("end of file inside a frame of %.0f bytes", state$rlen - 4 + state$need))
      }
      # A short read found fd 3 empty: what nexus sent is all here.
      state$drained <- length(chunk) < want
      if (state$drained) state$last_poll <- now()
      add_bytes(chunk)
    }
  }

  read_size <- function() if (state$need > READ_CHUNK) min(state$need, BIG_READ) else READ_CHUNK

  add_bytes <- function(chunk) {
    if (state$rlen == 0) {
      state$rbuf <- chunk
      state$rpos <- 0L
    } else {
      state$nmore <- state$nmore + 1L
      assign(as.character(state$nmore), chunk, envir = state$rmore)
    }
    state$rlen <- state$rlen + length(chunk)
  }

  # gather makes rbuf hold every byte not yet taken: once per frame at most.
  gather <- function() {
    if (state$nmore > 0L) {
      head <- state$rbuf
      if (state$rpos > 0L) head <- if (state$rpos < length(head)) head[(state$rpos + 1L):length(head)] else raw(0)
      state$rbuf <- unlist(c(list(head), mget(as.character(seq_len(state$nmore)), envir = state$rmore)), use.names = FALSE)
      state$rpos <- 0L
      state$rmore <- new.env(parent = emptyenv())
      state$nmore <- 0L
    }
  }

  # buffered_frame takes the frame at the front of what has been read, as
  # list(blob, body), or returns NULL (setting state$need) when it is not
  # all there yet.
  buffered_frame <- function() {
    if (state$rlen < 4) {
      state$need <- 0
      return(NULL)
    }
    if (length(state$rbuf) - state$rpos < 4) gather()
    pos <- state$rpos
    h <- as.integer(state$rbuf[(pos + 1L):(pos + 4L)])
    blob <- h[1] >= 128L
    n <- (h[1] %% 128L) * 16777216 + h[2] * 65536 + h[3] * 256 + h[4]
    if (blob) {
      if (n > MAX_FRAME) protocol_error(sprintf("blob length %.0f is over %.0f", n, MAX_FRAME))
    } else if (n < 2 || n > MAX_FRAME) {
      protocol_error(sprintf("frame length %.0f is outside 2..%.0f", n, MAX_FRAME))
    }
    if (state$rlen < 4 + n) {
      state$need <- 4 + n - state$rlen
      return(NULL)
    }
    state$rlen <- state$rlen - 4 - n
    state$need <- 0
    if (length(state$rbuf) - pos < 4 + n) {
      return(list(blob = blob, body = spanning_body(pos, n)))
    }
    body <- if (n > 0) state$rbuf[(pos + 5L):(pos + 4L + n)] else raw(0)
    state$rpos <- pos + 4L + as.integer(n)
    if (state$rpos >= length(state$rbuf)) {
      state$rbuf <- raw(0)
      state$rpos <- 0L
    }
    list(blob = blob, body = body)
  }

  # spanning_body takes the body of n bytes whose header is at pos in rbuf
  # and which runs on into the chunks in rmore, and leaves what follows it
  # as rbuf. It joins the body's pieces once: joining everything read and
  # then cutting the body out made two copies of a large frame, each in
  # memory touched for the first time, which large calls pay for.
  spanning_body <- function(pos, n) {
    head <- state$rbuf
    parts <- c(
      list(if (pos + 4L < length(head)) head[(pos + 5L):length(head)] else raw(0)),
      mget(as.character(seq_len(state$nmore)), envir = state$rmore)
    )
    state$rmore <- new.env(parent = emptyenv())
    state$nmore <- 0L
    state$rpos <- 0L
    # The body ends in part k; what follows it there and after is left over.
    got <- 0
    k <- 0L
    while (got < n) {
      k <- k + 1L
      got <- got + length(parts[[k]])
    }
    extra <- got - n
    rest <- if (k < length(parts)) parts[(k + 1L):length(parts)] else list()
    if (extra > 0) {
      last <- parts[[k]]
      keep <- length(last) - extra
      rest <- c(list(last[(keep + 1L):length(last)]), rest)
      parts[[k]] <- if (keep > 0) last[seq_len(keep)] else raw(0)
    }
    state$rbuf <- if (length(rest)) unlist(rest, use.names = FALSE) else raw(0)
    unlist(parts[seq_len(k)], use.names = FALSE)
  }

  # take handles one frame: a blob waits for its message; a message is
  # decoded with the blobs before it.
  take <- function(frame, guarded) {
    if (frame$blob) {
      state$blobs[[length(state$blobs) + 1L]] <- frame$body
      return(NULL)
    }
    blobs <- state$blobs
    state$blobs <- list()
    decode(frame$body, blobs, guarded)
  }

  # parse_text is jsonlite::parse_json(txt, simplifyVector = FALSE) without
  # its R-level wrappers, when this jsonlite has the function they call.
  parse_text <- local({
    sample <- '{"a":[1,2.5,"x",null,true,{},[]],"b":{"c":-2147483648,"d":[[1],[]]}}'
    inner <- tryCatch(get("parse_string", envir = asNamespace("jsonlite"), inherits = FALSE), error = function(e) NULL)
    same <- is.function(inner) && identical(
      tryCatch(inner(sample, FALSE), error = function(e) NULL),
      jsonlite::parse_json(sample, simplifyVector = FALSE)
    )
    if (same) function(txt) inner(txt, FALSE) else function(txt) jsonlite::parse_json(txt, simplifyVector = FALSE)
  })

  # decode turns a message's bytes into a list; a call's arguments become R
  # values (its arrays included), or .error says why they cannot. Parse
  # errors are caught here when guarded, else by the serving loop (phase
  # parse), which costs nothing when there are none.
  decode <- function(payload, blobs, guarded) {
    nul <- if (length(payload) < 4096L) any(payload == as.raw(0L)) else length(grepRaw(as.raw(0L), payload, fixed = TRUE)) > 0L
    if (nul) protocol_error("a message holds a NUL byte")
    txt <- rawToChar(payload)
    Encoding(txt) <- "UTF-8"
    if (!validUTF8(txt)) protocol_error("a message is not UTF-8")
    if (guarded) {
      message <- tryCatch(parse_text(txt), error = function(e) e)
      if (inherits(message, "error")) {
        return(unreadable(txt, message))
      }
    } else {
      state$parsing <- txt
      state$phase <- "parse"
      message <- parse_text(txt)
      state$phase <- "idle"
      state$parsing <- NULL
    }
    type <- if (is.list(message) && !is.null(names(message))) message[["type"]]
    if (!is.character(type) || length(type) != 1) protocol_error("a message is not an object with a type")
    if (type != "call") {
      if (length(blobs)) protocol_error(sprintf("%d blobs came before a %s message: only a call carries arrays", length(blobs), type))
      return(message)
    }
    id <- message[["id"]]
    if (!is.numeric(id) || length(id) != 1 || is.na(id)) protocol_error("a call has no numeric id")
    id_text <- NULL
    if (is.double(id) && abs(id) >= TWO53) {
      # Beyond 2^53 the double may not be the id: keep its text to echo it exactly.
      exact <- tryCatch(jsonlite::parse_json(txt, bigint_as_char = TRUE)[["id"]], error = function(e) NULL)
      if (is.character(exact) && length(exact) == 1) id_text <- exact
    }
    id_json <- if (!is.null(id_text)) id_text else if (is.integer(id)) sprintf("%d", id) else sprintf("%.0f", id)
    args <- message[["args"]]
    if (!is.list(args) || !is.null(names(args))) protocol_error(sprintf("call %s: args is not an array", id_json))
    if (length(blobs) || !is.null(message[["arrays"]])) args <- place_arrays(message[["arrays"]], blobs, args, id_json)
    state$suspect <- FALSE
    state$value_error <- NULL
    # Arguments that are all plain scalars, as in most small calls, are
    # already R values; as_r looks at the others.
    u <- unlist(args, recursive = FALSE, use.names = FALSE)
    if (length(u) != length(args) || !(is.integer(u) || is.logical(u) || (is.double(u) && !any(abs(u) >= TWO53)))) {
      args <- lapply(args, as_r)
    }
    error <- if (state$suspect || grepl("\\u0000", txt, fixed = TRUE)) text_error(txt, id_text, state$suspect)
    if (is.null(error)) error <- state$value_error
    ret <- message[["ret"]]
    list(
      type = "call", id = id, mid = message[["mid"]], progress = isTRUE(message[["progress"]]),
      args = args, .id_json = id_json, .error = error, .box = if (is.null(ret)) 0L else ret_rank(ret),
      .returns = message[["returns"]]
    )
  }

  # ret_rank is how many levels of lists the call's declared return type
  # has ("ret"), or 0 when the call does not say.
  ret_rank <- function(ret) {
    rank <- if (is.list(ret)) ret[["rank"]]
    if (is.numeric(rank) && length(rank) == 1 && !is.na(rank) && rank >= 1) as.integer(rank) else 0L
  }

  # unreadable is the message for JSON that jsonlite refused: a call whose
  # arguments R cannot read fails, anything else breaks the protocol.
  unreadable <- function(txt, e) {
    id <- call_id(txt)
    if (is.null(id)) protocol_error(paste0("bad message: ", conditionMessage(e)))
    list(
      type = "call", id = id, .id_json = format_integer(id), mid = NA, args = list(), .box = 0L,
      .error = paste0("the arguments cannot be read in R: ", conditionMessage(e))
    )
  }

  # call_id finds the id of a call whose JSON jsonlite refused.
  call_id <- function(txt) {
    if (!grepl('^\\s*\\{\\s*"type"\\s*:\\s*"call"', txt, perl = TRUE)) {
      return(NULL)
    }
    found <- regmatches(txt, regexec('"id"\\s*:\\s*([0-9]{1,15})[,}\\s]', txt, perl = TRUE))[[1]]
    if (length(found) < 2) NULL else as.numeric(found[2])
  }

  # send writes a message, after the blob of array when there is one. A
  # failed write (nexus is gone) ends the pool: see settle and on_warning.
  send <- function(payload, array = NULL) {
    bytes <- charToRaw(enc2utf8(payload))
    n <- length(bytes)
    was <- state$phase
    state$phase <- "send"
    con <- state$out_con
    if (!is.null(array)) {
      writeBin(blob_header(array$bytes), con)
      write_array(array, con)
    }
    # The connection buffers: one write(2) at flush for a small frame.
    if (n < 65536L) {
      writeBin(c(as.raw(c(0L, 0L, n %/% 256L, n %% 256L)), bytes), con) # one writeBin costs more than c()
    } else {
      writeBin(n, con, size = 4L, endian = "big")
      writeBin(bytes, con)
    }
    flush(con)
    state$phase <- was
    invisible(NULL)
  }

  # blob_header is the header of a blob of n bytes: bit 31 set.
  blob_header <- function(n) as.raw(c(n %/% 16777216 + 128, n %/% 65536 %% 256, n %/% 256 %% 256, n %% 256))

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
