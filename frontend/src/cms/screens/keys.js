import "../lib/shell.js";
import { h, screenRoot } from "../lib/dom.js";

screenRoot().append(h("p", {}, "Not built yet."));
