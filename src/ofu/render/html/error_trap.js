// Runs before the report's script: any script error is written into the
// page (and body[data-error]), so that a person sees why a chart is missing
// and a test can tell a page that drew from one that failed.
window.addEventListener("error", function (event) {
  var message = event.message || String(event.error);
  document.body.setAttribute("data-error", message);
  var box = document.getElementById("ofu-errors");
  box.hidden = false;
  box.textContent += "The report could not be drawn completely: " + message + "\n";
});
